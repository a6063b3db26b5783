/**
 * Undo from the page: an **Undo this turn** button under the last turn that changed
 * something and is not undone, when the kernel says it would undo that turn (it signed
 * the record: the `elelem.undoable` comm, see elelem_kernel/jupyter/undoable_comm.py; a
 * shared notebook's record gets no button), and the note under each undone turn.
 * `markAll` redraws every mark of a notebook (these and the badges) after a change.
 */

import { Cell, CodeCell, ICellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';
import { markCells } from './badges';
import { codeOutputs, widgetOf } from './cells';
import {
  UNDOABLE_TARGET,
  UndoableQuery,
  UndoRequest,
  asObject,
  commData,
  undoText,
  undoableTurns
} from './protocol';
import { restoreData } from './records';

/** How many times, and how far apart, to look again for a turn's output not yet rendered. */
const UNDO_RETRIES = 40;
const UNDO_RETRY_MS = 250;

/** What a kernel said of a record: true, false, 'asked', or 'silent' (no answer). */
type Verdict = boolean | 'asked' | 'silent';

/** A turn record as the Undo button looks at it (`metadata.elelem` of its output). */
type TurnRecord = { [key: string]: unknown };

/** The badge on every cell the agent changed, the Undo button and the undone turns'
 * notes, drawn again. */
export function markAll(panel: NotebookPanel): void {
  undoButton(panel);
  requestAnimationFrame(() => markUndoneTurns(panel)); // after re-rendered outputs are on the page
  markCells(panel);
}

/** The turn record of output `i` of an output area, when it is an object. */
function recordAt(area: NonNullable<ReturnType<typeof codeOutputs>>, i: number): TurnRecord | null {
  return asObject((area.get(i).metadata || {}).elelem);
}

/** The Undo button under the last undoable turn. It runs `/undo` for exactly that turn
 * (no cell is added). The turn is found in the notebook's model; a reopened notebook
 * renders its cells and their outputs after the model is ready, so when the turn's
 * output is not on the page yet this looks again shortly, a bounded number of times, one
 * look pending per notebook. */
export function undoButton(panel: NotebookPanel, tries = 0): void {
  let last: { cell: ICellModel; output: number; record: TurnRecord } | null = null;
  for (const cell of panel.content.model?.cells ?? []) {
    const outputs = codeOutputs(cell);
    for (let i = 0; outputs && i < outputs.length; i++) {
      const record = recordAt(outputs, i);
      if (record && Array.isArray(record.changes) && record.changes.length && !record.undone) {
        last = { cell, output: i, record };
      }
    }
  }
  undoButtons.get(panel)?.remove();
  undoButtons.delete(panel);
  if (last === null) {
    return;
  }
  const { cell, output, record } = last;
  const verdict = undoable(panel, record);
  if (verdict !== true) {
    return; // not ours to undo, or the kernel has not answered yet (it draws again then)
  }
  const widget = widgetOf(panel, cell.id);
  const child = outputNode(widget, output);
  // under the turn's rendered output, not beside it as a third column of the output row
  const node = child?.querySelector<HTMLElement>('.jp-OutputArea-output') ?? child;
  if (!widget || !node) {
    if (tries < UNDO_RETRIES && !panel.isDisposed && !undoRetries.has(panel)) {
      const retry = () => {
        undoRetries.delete(panel);
        undoButton(panel, tries + 1);
      };
      undoRetries.set(panel, setTimeout(retry, UNDO_RETRY_MS));
    }
    return;
  }
  const button = document.createElement('button');
  button.className = 'jp-Button elelem-undo';
  button.textContent = 'Undo this turn';
  button.title = "Revert this turn's changes to files and cells (not Python variables)";
  button.onclick = () => undoTurn(panel, button, record.turn as string, cell.id);
  node.appendChild(button);
  undoButtons.set(panel, button);
}

/** The page node of output `index` of a cell widget (a code cell's), if rendered. */
function outputNode(widget: Cell | undefined, index: number): HTMLElement | undefined {
  const area = (widget as Partial<CodeCell> | undefined)?.outputArea;
  return area?.widgets?.[index]?.node;
}

/** Ask the kernel to undo `turn` (the `undo` op of `elelem.undoable`: no cell is added);
 * what `/undo` says is shown under the turn, which the kernel marks undone. */
function undoTurn(panel: NotebookPanel, button: HTMLButtonElement, turn: string, cell: string): void {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || !kernel.handleComms) {
    return;
  }
  button.disabled = true;
  button.textContent = 'Undoing…';
  let said = false;
  const done = (text: string) => {
    said = true;
    undoNotes.set(turn, text);
    button.remove();
    markAll(panel);
  };
  try {
    const comm = kernel.createComm(UNDOABLE_TARGET);
    comm.onMsg = message => done(undoText(message.content.data));
    comm.onClose = () => {
      if (!said) {
        done('Not undone: the kernel did not answer (is elelem still loaded?).');
      }
    };
    // with the notebook's records, so a fresh kernel restores the conversation to undo
    const request: UndoRequest = { ...restoreData(panel, 'undo'), op: 'undo', turn, cell };
    comm.open(commData(request));
  } catch (error) {
    done(`Not undone: ${String(error)}`);
  }
}

/** What `/undo` said of each turn undone from this page (shown under the turn). */
const undoNotes = new Map<string, string>();

/** Mark each undone turn's output as such (live and after reopening), with what `/undo`
 * said when it was undone from this page. */
function markUndoneTurns(panel: NotebookPanel): void {
  for (const widget of panel.content.widgets) {
    const outputs = codeOutputs(widget.model);
    for (let i = 0; outputs && i < outputs.length; i++) {
      const record = recordAt(outputs, i);
      const child = outputNode(widget, i);
      if (!child || !record) {
        continue;
      }
      const undone = record.undone === true;
      const said = undoNotes.get(String(record.turn));
      child.classList.toggle('elelem-turn-undone', undone);
      let note = child.querySelector<HTMLElement>(':scope .elelem-undone-note');
      if (!undone && said === undefined) {
        note?.remove();
        continue;
      }
      if (!note) {
        note = document.createElement('div');
        note.className = 'elelem-undone-note';
        (child.querySelector('.jp-OutputArea-output') ?? child).appendChild(note);
      }
      note.textContent = said ?? 'Undone: this turn was reverted and is no longer sent to the model.';
    }
  }
}

/** What each kernel said of a record (by its turn and signature): true, false, 'asked',
 * or 'silent' (no answer: elelem is not loaded in that kernel yet, so it is asked again
 * after the kernel's next execution). A restart forgets every answer. */
const undoVerdicts = new WeakMap<Kernel.IKernelConnection, Map<string, Verdict>>();

function verdictsOf(kernel: Kernel.IKernelConnection): Map<string, Verdict> {
  let verdicts = undoVerdicts.get(kernel);
  if (!verdicts) {
    const made = new Map<string, Verdict>();
    kernel.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'autorestarting') {
        made.clear();
      } else if (status === 'idle') {
        for (const [key, verdict] of made) {
          if (verdict === 'silent') {
            made.delete(key);
          }
        }
      }
    });
    undoVerdicts.set(kernel, made);
    verdicts = made;
  }
  return verdicts;
}

/** Whether the panel's kernel would undo `record`: its verdict, or undefined while it is
 * asked (once per kernel and record; the button is drawn when the answer comes). */
function undoable(panel: NotebookPanel, record: TurnRecord): boolean | undefined {
  const { turn, conversation, changes, signature } = record;
  if (typeof turn !== 'string' || typeof signature !== 'string') {
    return false;
  }
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || !kernel.handleComms) {
    return undefined; // asked when the kernel is there (live.ts's `attachLive`)
  }
  const verdicts = verdictsOf(kernel);
  const key = `${turn} ${signature}`;
  const known = verdicts.get(key);
  if (known === 'asked') {
    return undefined;
  }
  if (known !== undefined) {
    return known === true;
  }
  verdicts.set(key, 'asked');
  const answered = (verdict: boolean | 'silent') => {
    if (verdicts.get(key) === 'asked') {
      verdicts.set(key, verdict);
      if (!panel.isDisposed && verdict === true) {
        undoButton(panel);
      }
    }
  };
  try {
    const comm = kernel.createComm(UNDOABLE_TARGET);
    comm.onMsg = message => {
      const turns = undoableTurns(message.content.data);
      answered(turns !== null && turns.includes(turn));
    };
    comm.onClose = () => answered('silent');
    const query = {
      v: 1,
      records: [{ turn, conversation, changes, signature }]
    } as UndoableQuery; // `changes` is an array (undoButton), `conversation` the record's
    comm.open(commData(query));
  } catch (error) {
    answered('silent');
  }
  return undefined;
}

/** The Undo button each notebook shows (one at most). */
const undoButtons = new WeakMap<NotebookPanel, HTMLElement>();

/** A notebook's one pending look for its turn's output (edits while it waits add none). */
const undoRetries = new WeakMap<NotebookPanel, ReturnType<typeof setTimeout>>();
