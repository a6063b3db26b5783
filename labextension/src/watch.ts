/**
 * A read the kernel may use again: after the page answers a `read`, it watches the
 * notebook for the first change to what a run or an edit acts on (a cell's source, its
 * execution count, the list of cells: inserted, deleted, moved, retyped) and tells the
 * kernel once (`Changed`). Until then the kernel runs or edits from that read without
 * asking again (elelem_kernel/jupyter/notebook_comm.py): a `notebook_run` right after a
 * `notebook_read` costs no round trip through the page. Outputs are not watched: a run
 * or an edit never acts on them, and a `notebook_read` always asks anew.
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
