/**
 * The badge on every cell the agent changed: its `metadata.elelem` says which turn.
 */

import { NotebookPanel } from '@jupyterlab/notebook';
import { MARK } from './cells';
import { asObject } from './protocol';

/** Badge the cells whose metadata says a turn changed them (and no others). */
export function markCells(panel: NotebookPanel): void {
  for (const widget of panel.content.widgets) {
    const found = asObject(widget.model.getMetadata(MARK));
    const marked = !!found && 'turn' in found;
    widget.node.classList.toggle('elelem-agent-cell', marked);
    if (found && marked) {
      widget.node.dataset.elelemTurn = String(found.turn ?? '');
      widget.node.title = `changed by elelem (turn ${String(found.turn ?? '?')})`;
    }
  }
}
