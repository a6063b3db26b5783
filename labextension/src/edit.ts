/**
 * The `edit` and `outputs` requests of the `elelem.notebook` comm.
 *
 * - `edit`: one change, applied through the notebook's shared model (so undo, saving and
 *   real-time collaboration see an ordinary edit), at once or, when `ask`, after the
 *   person accepts the diff shown in the cell (proposal.ts). Cells the agent changed
 *   carry `metadata.elelem.turn` and a small badge (badges.ts).
 * - `outputs`: what the kernel's run of a cell (`notebook_run`) printed, shown in that
 *   cell with its execution count, as if the person had run it.
 */

import { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { MARK, NbOutput, findIndex, sharedCode } from './cells';
import {
  EditRequest,
  EditResult,
  NotebookOutput,
  OutputsRequest,
  OutputsResult
} from './protocol';
import { ITurnState, propose } from './proposal';
import { markAll } from './undo';

/** At most this many characters of a changed cell's outputs are kept to put back on undo. */
const MAX_KEPT_OUTPUTS = 64_000;

/** Fail unless cell `id` still holds `before` (what the kernel's change was made from). */
function check(panel: NotebookPanel, request: EditRequest): number {
  if (request.action === 'insert') {
    return -1;
  }
  const { index, found } = findIndex(panel, String(request.cell));
  if (!found) {
    throw new Error(`cell ${request.cell} is no longer in the notebook; read it again`);
  }
  const source = panel.content.model!.cells.get(index).sharedModel.getSource();
  if (source !== request.before) {
    throw new Error(`cell ${request.cell} changed since it was read; read it again`);
  }
  return index;
}

/** Make the change, asking first when the request says so; what became of it. */
export async function edit(
  panel: NotebookPanel,
  state: ITurnState,
  request: EditRequest
): Promise<EditResult> {
  check(panel, request);
  if (!request.ask || state.all === 'accept') {
    const kept = outputsBefore(panel, request);
    apply(panel, request);
    return { decision: 'applied', ...kept };
  }
  if (state.all === 'reject') {
    return { decision: 'rejected', reason: 'the person rejected all edits of this turn' };
  }
  const decision = await propose(panel, state, request);
  if (decision.decision === 'accepted') {
    check(panel, request);
    const kept = outputsBefore(panel, request);
    apply(panel, request);
    return { ...decision, ...kept };
  }
  return decision;
}

/** A code cell's outputs and execution count before the agent changes its source, for
 * `/undo` to put back with the source (none when they are too large to keep). */
function outputsBefore(
  panel: NotebookPanel,
  request: EditRequest
): Pick<EditResult, 'outputs_before' | 'execution_count_before'> {
  if (request.action === 'insert' || request.action === 'move' || request.action === 'delete') {
    return {};
  }
  const { index, found } = findIndex(panel, String(request.cell));
  const cell = sharedCode(found ? panel.content.model!.sharedModel.cells[index] : null);
  if (!cell) {
    return {};
  }
  const outputs = cell.getOutputs();
  if (JSON.stringify(outputs).length > MAX_KEPT_OUTPUTS) {
    return {};
  }
  return {
    outputs_before: outputs as NotebookOutput[],
    execution_count_before: cell.execution_count ?? null
  };
}

function mark(request: EditRequest): { turn: string | null; change: string } {
  return { turn: request.turn ?? null, change: request.action };
}

function apply(panel: NotebookPanel, request: EditRequest): void {
  const shared = panel.content.model!.sharedModel;
  if (request.action === 'insert') {
    const after = request.after ? findIndex(panel, String(request.after)) : null;
    const index = after && after.found ? after.index + 1 : Math.min(request.index, shared.cells.length);
    shared.insertCell(index, {
      id: request.new_id ?? undefined,
      cell_type: request.cell_type,
      source: request.source,
      metadata: { [MARK]: mark(request) }
    });
  } else {
    const { index } = findIndex(panel, String(request.cell));
    const cell = shared.cells[index];
    if (request.action === 'delete') {
      shared.deleteCell(index);
    } else if (request.action === 'move') {
      shared.moveCell(index, Math.max(0, Math.min(request.to, shared.cells.length - 1)));
      cell.setMetadata(MARK, mark(request));
    } else if (request.cell_type !== cell.cell_type) {
      const metadata = { ...cell.getMetadata(), [MARK]: mark(request) };
      shared.transact(() => {
        shared.deleteCell(index);
        shared.insertCell(index, {
          id: request.cell,
          cell_type: request.cell_type,
          source: request.source,
          metadata
        });
      });
    } else {
      cell.setSource(request.source);
      cell.setMetadata(MARK, mark(request));
    }
  }
  markAll(panel);
}

/** Put what the kernel's run of a cell printed into that cell, with its count. */
export function showOutputs(panel: NotebookPanel, request: OutputsRequest): OutputsResult {
  const { index, found } = findIndex(panel, String(request.cell));
  if (!found) {
    throw new Error(`cell ${request.cell} is no longer in the notebook`);
  }
  const cell = panel.content.model!.cells.get(index);
  if (cell.type !== 'code') {
    throw new Error(`cell ${request.cell} is no longer a code cell`);
  }
  const code = cell as ICodeCellModel;
  code.outputs.clear();
  for (const output of Array.isArray(request.outputs) ? request.outputs : []) {
    code.outputs.add(output as NbOutput);
  }
  code.executionCount =
    typeof request.execution_count === 'number' ? request.execution_count : null;
  return { shown: true };
}
