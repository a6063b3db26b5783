/**
 * A read the kernel may use again: after the page answers a `read`, it watches the
 * notebook for the first change to what a run or an edit acts on (a cell's source, an
 * execution count it is given, the list of cells: inserted, deleted, moved, retyped) and
 * tells the kernel once (`Changed`). Until then, and for at most a couple of seconds, the
 * kernel runs or edits from that read without asking again
 * (elelem_kernel/jupyter/notebook_comm.py): a `notebook_run` right after a
 * `notebook_read` costs no round trip through the page. Outputs are not watched: a run
 * or an edit never acts on them, and a `notebook_read` always asks anew. (JupyterLab
 * clears a cell's count silently when a run starts: only the count it ends with is seen;
 * the cell ids a run and an edit act on do not change.)
 */

import { INotebookModel } from '@jupyterlab/notebook';

/** The parts of a cell's change (`CellChange` of @jupyter/ydoc) a run or an edit reads. */
interface ICodeChange {
  sourceChange?: unknown;
  executionCountChange?: unknown;
}

/** One turn's watch, for its comm: each read starts it in the read's own task, and the
 * first change to the notebook's code or cells after it is told once that read's answer
 * has gone (one seen before waits for it), so `Changed` never overtakes the answer it
 * makes stale. */
export class CodeWatch {
  /** The cells whose changes are listened to, while watching; else null. */
  private cells: INotebookModel['sharedModel']['cells'] | null = null;
  private reading = 0;
  private held = false;

  constructor(
    private readonly model: INotebookModel,
    private readonly tell: () => void
  ) {}

  /** A read is being answered: watch from now (if not watching already). */
  start(): void {
    this.reading += 1;
    if (this.cells !== null) {
      return;
    }
    const notebook = this.model.sharedModel;
    this.cells = [...notebook.cells];
    notebook.changed.connect(this.onNotebook);
    for (const cell of this.cells) {
      cell.changed.connect(this.onCell);
    }
  }

  /** That read's answer (or its error) has been sent. */
  answered(): void {
    this.reading = Math.max(0, this.reading - 1);
    if (this.reading === 0 && this.held) {
      this.held = false;
      this.tell();
    }
  }

  /** The turn ended: stop watching, tell nothing more. */
  dispose(): void {
    this.unwatch();
    this.held = false;
  }

  private readonly onNotebook = (_: unknown, change: { cellsChange?: unknown }) => {
    if (change.cellsChange) {
      this.changed();
    }
  };

  private readonly onCell = (_: unknown, change: ICodeChange) => {
    if (change.sourceChange || change.executionCountChange) {
      this.changed();
    }
  };

  private changed(): void {
    if (this.cells === null) {
      return;
    }
    this.unwatch();
    if (this.reading > 0) {
      this.held = true;
    } else {
      this.tell();
    }
  }

  private unwatch(): void {
    if (this.cells === null) {
      return;
    }
    this.model.sharedModel.changed.disconnect(this.onNotebook);
    for (const cell of this.cells) {
      cell.changed.disconnect(this.onCell);
    }
    this.cells = null;
  }
}
