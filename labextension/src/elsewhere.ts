/**
 * A turn this page saw only live: show its frozen output once it has ended.
 *
 * A turn's live view is a widget shown in the page that ran the cell, replaced by the
 * turn's frozen output when it ends (an `update_display_data` for that page's output).
 * A page reloaded, or closed and opened again, while the turn ran shows the notebook as
 * last saved: at best a live view whose widgets die with the turn ("Error displaying
 * widget: model not found"). A turn whose page went away ends declined, saying why
 * (elelem_kernel/jupyter/page_alive.py), and this is where the new page shows it:
 *
 * - the kernel sends every output to every page: a frozen turn sent for another client
 *   (its output metadata names the turn's cell) replaces that cell's live view here;
 * - when the kernel is idle and cells still show a live view, the page asks for their
 *   frozen outputs on the `elelem.frozen` comm (elelem_kernel/jupyter/frozen_comm.py),
 *   not for a cell this page is running: the kernel says idle during a turn too, after
 *   each comm message its subshells handle, and asking then opened that comm (and made
 *   its subshell) in the middle of the first turn.
 *
 * Only a live view is replaced (a widget output whose plain text is the view's), or an
 * empty cell filled; other outputs are left as they are. In a shared document (real-time
 * collaboration) the page that ran the cell writes its frozen output for everyone, so
 * nothing is adopted here: a second writer would add a second copy.
 */

import { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import type { IDisplayData, IOutput } from '@jupyterlab/nbformat';
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { asObject } from './protocol';

/** The comm target of the kernel's frozen outputs. */
const FROZEN_TARGET = 'elelem.frozen';
/** The mime type of a widget's view in a saved output. */
const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';
/** How a turn's live view reads as plain text (render/widget.py's ELSEWHERE). */
const LIVE_TEXT = 'elelem is working on this turn';

/** Watch the panel's kernel (again after a change) for turns that ended elsewhere. */
export function showFrozenElsewhere(panel: NotebookPanel): void {
  let watched: Kernel.IKernelConnection | null = null;
  let asked = new Set<string>();
  const onMessage = (
    kernel: Kernel.IKernelConnection,
    msg: KernelMessage.IIOPubMessage
  ): void => {
    const type = msg.header.msg_type;
    if (type !== 'update_display_data' && type !== 'display_data') {
      return;
    }
    if (asObject(msg.parent_header)?.session === kernel.clientId) {
      return; // this page's own turn: its output area takes it
    }
    if (panel.context.model.collaborative) {
      return; // a shared document (jupyter-collaboration) brings the other page's output
    }
    const frozen = frozenOutput(msg.content);
    if (frozen) {
      adopt(panel, frozen.cell, frozen.output, true);
    }
  };
  // From the moment the page has a kernel connection, not once it is ready: a reloaded
  // page's connection is ready only when the turn holding the main shell has ended.
  const watch = (): void => {
    watched?.iopubMessage.disconnect(onMessage);
    watched = panel.sessionContext.session?.kernel ?? null;
    watched?.iopubMessage.connect(onMessage);
    asked = new Set<string>();
  };
  panel.sessionContext.kernelChanged.connect(watch);
  watch();
  panel.sessionContext.statusChanged.connect((_, status) => {
    if (status === 'idle' && !panel.context.model.collaborative) {
      askForFrozen(panel, asked);
    }
  });
  panel.disposed.connect(() => watched?.iopubMessage.disconnect(onMessage));
}

/** Ask the idle kernel for the frozen outputs of the cells that show a live view (each
 * cell once per kernel). */
function askForFrozen(panel: NotebookPanel, asked: Set<string>): void {
  const kernel = panel.sessionContext.session?.kernel;
  const cells = liveViewCells(panel).filter(id => !asked.has(id));
  if (!kernel || !kernel.handleComms || cells.length === 0) {
    return;
  }
  cells.forEach(id => asked.add(id));
  try {
    const comm = kernel.createComm(FROZEN_TARGET);
    comm.onMsg = msg => {
      const found = asObject(asObject(msg.content.data)?.outputs) ?? {};
      for (const [cell, output] of Object.entries(found)) {
        const frozen = frozenOutput(output);
        if (frozen) {
          adopt(panel, cell, frozen.output, false);
        }
      }
    };
    comm.open({ v: 1, cells });
  } catch (error) {
    console.warn('elelem-kernel: could not ask for the frozen turns', error);
  }
}

/** Ids of the code cells that show a turn's live view, but for those this page runs. */
function liveViewCells(panel: NotebookPanel): string[] {
  const found: string[] = [];
  for (const cell of panel.content.model?.cells ?? []) {
    const code = cell as ICodeCellModel;
    if (cell.type === 'code' && code.executionState !== 'running' && liveViewAt(code.outputs) >= 0) {
      found.push(cell.id);
    }
  }
  return found;
}

/** Index of the first live view in `outputs`, or -1. */
function liveViewAt(outputs: ICodeCellModel['outputs']): number {
  for (let i = 0; i < outputs.length; i++) {
    const data = outputs.get(i).data;
    const text = data['text/plain'];
    if (WIDGET_VIEW in data && String(text ?? '').startsWith(LIVE_TEXT)) {
      return i;
    }
  }
  return -1;
}

/** A turn's frozen output in `value` (an output's content: HTML data, the record in its
 * metadata), as a display_data output and the cell its record names; else null. */
function frozenOutput(value: unknown): { cell: string; output: IDisplayData } | null {
  const content = asObject(value);
  const data = asObject(content?.data);
  const metadata = asObject(content?.metadata);
  const record = asObject(metadata?.elelem);
  if (!data || !metadata || typeof data['text/html'] !== 'string') {
    return null;
  }
  const output = {
    output_type: 'display_data',
    data,
    metadata
  } as IDisplayData; // JSON from the kernel, its shape checked above
  return { cell: typeof record?.cell === 'string' ? record.cell : '', output };
}

/** What a turn's cell shows in place of its live view when the kernel stopped first. */
const UNFINISHED =
  'elelem: the kernel stopped before this turn ended (it restarted, shut down or died), ' +
  'so the turn has no record. What its tools did until then stays done; run the cell ' +
  'to ask again.';

/** In the cell `cellId`, put UNFINISHED in place of its live view, whose widgets died
 * with the kernel (their views would show broken links and "working…" for good, and the
 * saved notebook would say the turn is still running). */
export function endUnfinished(panel: NotebookPanel, cellId: string): void {
  adopt(panel, cellId, { output_type: 'stream', name: 'stderr', text: UNFINISHED }, false);
}

/** Put the frozen output in the cell `cellId` in place of its live view, or (`orEmpty`)
 * as its only output when it shows none. */
function adopt(panel: NotebookPanel, cellId: string, output: IOutput, orEmpty: boolean): void {
  for (const cell of panel.content.model?.cells ?? []) {
    if (cell.id !== cellId || cell.type !== 'code') {
      continue;
    }
    const outputs = (cell as ICodeCellModel).outputs;
    const at = liveViewAt(outputs);
    if (at >= 0) {
      outputs.set(at, output);
    } else if (orEmpty && outputs.length === 0) {
      outputs.add(output);
    }
    return;
  }
}
