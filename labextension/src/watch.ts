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

/** Call `changed` once, at the first change to `model`'s code or cells; the function
 * returned stops watching (the turn ended first). */
export function watchCode(model: INotebookModel, changed: () => void): () => void {
  const notebook = model.sharedModel;
  const cells = [...notebook.cells];
  let watching = true;
  const stop = () => {
    if (watching) {
      watching = false;
      notebook.changed.disconnect(onNotebook);
      for (const cell of cells) {
        cell.changed.disconnect(onCell);
      }
    }
  };
  const fire = () => {
    if (watching) {
      stop();
      changed();
    }
  };
  const onNotebook = (_: unknown, change: { cellsChange?: unknown }) => {
    if (change.cellsChange) {
      fire();
    }
  };
  const onCell = (_: unknown, change: ICodeChange) => {
    if (change.sourceChange || change.executionCountChange) {
      fire();
    }
  };
  notebook.changed.connect(onNotebook);
  for (const cell of cells) {
    cell.changed.connect(onCell);
  }
  return stop;
}

/** One turn's watch, for its comm: each read starts it in the read's own task; a change
 * is told once that read's answer has gone (one seen before waits for it), so `Changed`
 * never overtakes the answer it makes stale. */
export class CodeWatch {
  private stop: (() => void) | null = null;
  private reading = 0;
  private held = false;

  constructor(
    private readonly model: INotebookModel,
    private readonly tell: () => void
  ) {}

  /** A read is being answered: watch from now (if not watching already). */
  start(): void {
    this.reading += 1;
    this.stop ??= watchCode(this.model, () => {
      this.stop = null;
      if (this.reading > 0) {
        this.held = true;
      } else {
        this.tell();
      }
    });
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
    this.stop?.();
    this.stop = null;
    this.held = false;
  }
}
