/**
 * "Fix with elelem" on a cell's error output: a button under the traceback of a cell that
 * just failed, where the kernel has elelem (the Elelem kernel, or `%load_ext
 * elelem_kernel` run in this kernel). It adds a prompt cell below the failing one that
 * asks the agent to fix that cell, named as the person sees it (`cell [5]`), and runs it:
 * the fix then comes as the usual diff box in the failing cell, to accept or reject.
 */

import { Cell, CodeCell, ICodeCellModel } from '@jupyterlab/cells';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

/** Name of the Elelem kernel, whose every cell is a prompt. */
const ELELEM_KERNEL = 'elelem';
const LOADED = /^\s*%load_ext\s+elelem_kernel\b/m;
/** Characters of the error's message put in the prompt. */
const MAX_MESSAGE = 300;

/** Offer the fix under `cell`'s error output, when it has one and the kernel has elelem. */
export function offerFix(panel: NotebookPanel, cell: Cell): void {
  if (cell.model.type !== 'code' || !hasElelem(panel)) {
    return;
  }
  const code = cell as CodeCell;
  const outputs = code.model.outputs;
  for (let i = 0; i < outputs.length; i++) {
    const output = outputs.get(i).toJSON();
    if (output.output_type !== 'error') {
      continue;
    }
    const node = code.outputArea.widgets[i]?.node;
    const host = node?.querySelector<HTMLElement>('.jp-OutputArea-output') ?? node;
    if (!host || host.querySelector('.elelem-fix')) {
      return;
    }
    const button = document.createElement('button');
    button.className = 'jp-Button elelem-fix';
    button.textContent = 'Fix with elelem';
    button.title = 'Ask elelem to fix this cell: the change comes as a diff here to accept or reject';
    button.onclick = () => fix(panel, cell, output);
    host.appendChild(button);
    return;
  }
}

/** Whether the panel's kernel has elelem: the Elelem kernel, or the magic loaded by a
 * cell that ran in this kernel. */
function hasElelem(panel: NotebookPanel): boolean {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel) {
    return false;
  }
  if (kernel.name === ELELEM_KERNEL) {
    return true;
  }
  for (const cell of panel.content.model?.cells ?? []) {
    const ran = cell.type === 'code' && (cell as ICodeCellModel).executionCount !== null;
    if (ran && LOADED.test(cell.sharedModel.getSource())) {
      return true;
    }
  }
  return false;
}

const SUFFIXES: { [last: number]: string } = { 1: 'st', 2: 'nd', 3: 'rd' };

/** `cell [5]`, or `the 6th cell` before it has a count. */
function label(panel: NotebookPanel, cell: Cell): string {
  const count = (cell.model as Partial<ICodeCellModel>).executionCount;
  if (typeof count === 'number') {
    return `cell [${count}]`;
  }
  const n = panel.content.widgets.indexOf(cell) + 1;
  const tens = n % 100;
  const suffix =
    tens >= 10 && tens <= 20 ? 'th' : SUFFIXES[n % 10] ?? 'th';
  return `the ${n}${suffix} cell`;
}

/** Add the prompt cell below `cell` and run it. */
function fix(panel: NotebookPanel, cell: Cell, error: { [key: string]: unknown }): void {
  const model = panel.content.model;
  if (!model) {
    return;
  }
  const message = `${String(error.ename ?? 'Error')}: ${String(error.evalue ?? '')}`
    .replace(/\s+/g, ' ')
    .slice(0, MAX_MESSAGE);
  const ask = `Fix ${label(panel, cell)}: it failed with ${message}. Change only that cell.`;
  const elelem = panel.sessionContext.session?.kernel?.name === ELELEM_KERNEL;
  const index = panel.content.widgets.indexOf(cell) + 1;
  model.sharedModel.insertCell(index, {
    cell_type: 'code',
    source: elelem ? ask : `%%elelem\n${ask}`
  });
  panel.content.activeCellIndex = index;
  void NotebookActions.run(panel.content, panel.sessionContext);
}
