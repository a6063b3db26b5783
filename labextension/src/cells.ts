/**
 * Finding a notebook's cells by id, in its model and on the page, and a code cell's
 * outputs: what the comms' requests name cells by.
 */

import { Cell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

/** Metadata key of a cell the agent changed. */
export const MARK = 'elelem';

/** A code cell model's outputs, or null for other cells. */
export function codeOutputs(cell: ICellModel): ICodeCellModel['outputs'] | null {
  return cell.type === 'code' ? (cell as ICodeCellModel).outputs : null;
}

/** A cell of the notebook's shared model, and one that is a code cell. */
type SharedCell = NonNullable<NotebookPanel['model']>['sharedModel']['cells'][number];
export type SharedCodeCell = Extract<SharedCell, { getOutputs(): unknown }>;

/** `cell` as a code cell of the shared model, or null for other cells. */
export function sharedCode(cell: SharedCell | null | undefined): SharedCodeCell | null {
  return cell && cell.cell_type === 'code' ? (cell as SharedCodeCell) : null;
}

/** A cell's outputs as nbformat has them. */
export type NbOutput = ReturnType<ICodeCellModel['outputs']['toJSON']>[number];

export function findIndex(panel: NotebookPanel, id: string): { index: number; found: boolean } {
  const model = panel.content.model;
  if (!model) {
    return { index: -1, found: false };
  }
  for (let i = 0; i < model.cells.length; i++) {
    if (model.cells.get(i).id === id) {
      return { index: i, found: true };
    }
  }
  return { index: -1, found: false };
}

export function widgetOf(panel: NotebookPanel, id: string): Cell | undefined {
  return panel.content.widgets.find(widget => widget.model.id === id);
}
