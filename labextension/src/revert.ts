/**
 * The `/undo` requests of the `elelem.notebook` comm: `revert` undoes one change of an
 * earlier turn (or, for `/redo`, applies it again), only where the cell is as that turn
 * left it; `mark_undone` sets `undone` (or clears it) on a turn's record in its frozen
 * output, so a reopened notebook knows.
 */

import { NotebookPanel } from '@jupyterlab/notebook';
import { MARK, NbOutput, codeOutputs, findIndex, sharedCode } from './cells';
import { MarkUndoneResult, RevertRequest, RevertResult, asObject } from './protocol';
import { markAll } from './undo';

/** Undo one change of a turn where the cell is as the turn left it. */
export function revert(panel: NotebookPanel, change: RevertRequest): RevertResult {
  const shared = panel.content.model!.sharedModel;
  const { index, found } = findIndex(panel, String(change.cell));
  const source = found ? shared.cells[index].getSource() : null;
  if (change.action === 'delete') {
    if (found) {
      return { reverted: false, why: 'a cell with its id is back already' };
    }
    shared.insertCell(Math.min(Number(change.from_index ?? change.index), shared.cells.length), {
      id: change.cell,
      cell_type: change.cell_type ?? 'code',
      source: change.before ?? ''
    });
    return { reverted: true };
  }
  if (!found) {
    return { reverted: false, why: 'the cell is gone' };
  }
  if (change.action === 'move') {
    shared.moveCell(index, Math.min(change.from_index ?? index, shared.cells.length - 1));
    return { reverted: true };
  }
  if (source !== change.after) {
    return { reverted: false, why: 'changed since the turn' };
  }
  if (change.action === 'insert') {
    shared.deleteCell(index);
  } else if (change.cell_type && change.cell_type !== shared.cells[index].cell_type) {
    const cellType = change.cell_type;
    const metadata = { ...shared.cells[index].getMetadata() };
    shared.transact(() => {
      shared.deleteCell(index);
      shared.insertCell(index, {
        id: change.cell,
        cell_type: cellType,
        source: change.before ?? '',
        metadata
      });
    });
  } else {
    const cell = shared.cells[index];
    shared.transact(() => {
      cell.setSource(change.before ?? '');
      cell.deleteMetadata(MARK);
      const code = sharedCode(cell);
      if (code) {
        // the outputs of the code the turn wrote do not belong to the code put back
        code.setOutputs(Array.isArray(change.outputs) ? (change.outputs as NbOutput[]) : []);
        code.execution_count = change.outputs ? (change.execution_count ?? null) : null;
      }
    });
  }
  markAll(panel);
  return { reverted: true };
}

/** Mark a turn's record in its frozen output as undone or not (kept when the notebook is saved). */
export function markUndone(panel: NotebookPanel, turn: string, undone: boolean): MarkUndoneResult {
  let marked = 0;
  for (const cell of panel.content.model!.cells) {
    const area = codeOutputs(cell);
    for (let i = 0; area && i < area.length; i++) {
      const output = area.get(i).toJSON();
      const record = asObject(asObject(output.metadata)?.elelem);
      if (record && record.turn === turn) {
        const metadata = { ...asObject(output.metadata), elelem: { ...record, undone } };
        area.set(i, { ...output, metadata } as NbOutput);
        marked++;
      }
    }
  }
  return { marked };
}
