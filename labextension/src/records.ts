/**
 * What the `elelem.restore` comm carries (elelem_kernel/jupyter/restore_comm.py): the
 * notebook's records in cell order, its path and what this extension offers. The
 * `elelem.undoable` comm's undo request carries it too.
 */

import { PageConfig } from '@jupyterlab/coreutils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { codeOutputs } from './cells';
import { CellType, Json, RecordCell, RestoreData, RestoreReason } from './protocol';

/** What this extension can do for the kernel: `notebook` is the `elelem.notebook` comm,
 * the open notebook as the agent's workspace. */
const FEATURES = ['notebook'];

/** The restore message of `panel`, sent for `reason`. */
export function restoreData(panel: NotebookPanel, reason: RestoreReason): RestoreData {
  return {
    v: 1,
    reason,
    path: panel.context.path,
    root: PageConfig.getOption('serverRoot'),
    features: FEATURES,
    notebook: { cells: recordCells(panel) }
  };
}

/** Each cell's id, type and the `metadata.elelem` of its outputs, in order (read from
 * the output models, so outputs' data such as images are never copied). */
export function recordCells(panel: NotebookPanel): RecordCell[] {
  const model = panel.content.model;
  if (!model) {
    return [];
  }
  const found: RecordCell[] = [];
  for (const cell of model.cells) {
    const outputs: RecordCell['outputs'] = [];
    const area = codeOutputs(cell);
    for (let i = 0; area && i < area.length; i++) {
      const metadata = area.get(i).metadata;
      if (metadata && 'elelem' in metadata) {
        outputs.push({ metadata: { elelem: metadata.elelem as Json } });
      }
    }
    found.push({ id: cell.id, cell_type: cell.type as CellType, outputs });
  }
  return found;
}
