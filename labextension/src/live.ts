/**
 * The open notebook as the agent's workspace: the `elelem.notebook` comm.
 *
 * The kernel opens this comm once per turn (elelem_kernel/jupyter/notebook_comm.py) with
 * the turn's cell id, and once with none when the page has linked it (the standing comm,
 * which holds the target's comm subshell from before the first turn). Only the notebook that sent the turn answers: its kernel connection
 * sent the execute request (the parent header's session is its client id) and it holds
 * that cell. It says `hello` once its comm subshell is up (answers then reach the kernel
 * while the cell runs), acknowledges each request at once and answers it when done. The
 * messages are protocol.ts's types (the schema: comm_schemas/elelem.notebook.json); each
 * request has its module: `read` (read.ts), `edit` and `outputs` (edit.ts, the diff the
 * person decides on in proposal.ts), `revert` and `mark_undone` (revert.ts). The marks
 * the notebook shows are badges.ts's and undo.ts's, their styles styles.ts's.
 *
 * Cell sources and outputs are only ever put in the page as text (CodeMirror documents,
 * `textContent`), never as HTML.
 */

import { NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { findIndex } from './cells';
import { edit, showOutputs } from './edit';
import { endUnfinished } from './elsewhere';
import { ITurnState, withdraw } from './proposal';
import {
  NOTEBOOK_TARGET,
  NotebookReply,
  NotebookRequest,
  Result,
  asObject,
  commData,
  openingOf,
  requestOf
} from './protocol';
import { read } from './read';
import { markUndone, revert } from './revert';
import { addStyle } from './styles';
import { markAll, undoButton } from './undo';
import { CodeWatch } from './watch';

/** A kernel status after which no turn of the kernel goes on. */
const GONE: ReadonlySet<Kernel.Status> = new Set([
  'restarting',
  'autorestarting',
  'terminating',
  'dead'
]);

/** Register the comm target on the panel's kernel connection (again after a change). */
export function attachLive(panel: NotebookPanel): void {
  const register = () => {
    const kernel = panel.sessionContext.session?.kernel;
    if (kernel && kernel.handleComms) {
      kernel.registerCommTarget(NOTEBOOK_TARGET, (comm, msg) => opened(panel, kernel, comm, msg));
      undoButton(panel); // the kernel says which turn it would undo: ask the new one
    }
  };
  panel.sessionContext.kernelChanged.connect(register);
  panel.sessionContext.ready.then(register).catch(() => undefined);
  panel.context.ready.then(() => markAll(panel)).catch(() => undefined);
  panel.content.modelContentChanged.connect(() => markAll(panel));
  addStyle();
}

function opened(
  panel: NotebookPanel,
  kernel: Kernel.IKernelConnection,
  comm: Kernel.IComm,
  msg: KernelMessage.ICommOpenMsg
): void {
  const data = openingOf(msg.content.data ?? {});
  const session = asObject(msg.parent_header)?.session;
  if (session && session !== kernel.clientId) {
    return; // another client's turn: not ours to answer, nor to close
  }
  if (!data) {
    // The kernel's standing comm (no cell): kept open, never answered. JupyterLab runs
    // comm messages on one subshell per comm target while a comm of that target is open,
    // so the turns' comms find their subshell made, and it is not deleted between turns.
    return;
  }
  const model = panel.content.model;
  if (!model || !findIndex(panel, data.cell).found) {
    return;
  }
  const state: ITurnState = { cell: data.cell, all: null, pending: new Set() };
  // After each read, the first change to the cells' code is told once (watch.ts).
  const watch = new CodeWatch(model, () => {
    if (!comm.isDisposed) {
      send(comm, { type: 'changed' });
    }
  });
  // A restart, a shutdown or a change of kernel ends the turn with no comm close: its
  // diff boxes go (the person's click would reach no one), its watch stops, and its cell
  // says the turn ended unfinished in place of the dead live view (elsewhere.ts).
  const gone = (_: unknown, status: Kernel.Status) => {
    if (GONE.has(status)) {
      ended();
      if (!panel.isDisposed) {
        endUnfinished(panel, state.cell);
      }
    }
  };
  const ended = () => {
    kernel.statusChanged.disconnect(gone);
    kernel.disposed.disconnect(ended);
    withdraw(state);
    watch.dispose();
  };
  kernel.statusChanged.connect(gone);
  kernel.disposed.connect(ended);
  // Not returned: JupyterLab holds every later message of the kernel until a comm
  // handler's promise settles, and an edit's waits for the person. The live view's
  // updates (its clocks, the card saying whom it waits for) must go on meanwhile.
  comm.onMsg = message => {
    void handle(panel, comm, state, message.content.data, watch);
  };
  comm.onClose = ended;
  panel.disposed.connect(() => {
    ended();
    if (!comm.isDisposed) {
      comm.close();
    }
  });
  if (!kernel.supportsSubshells) {
    return; // answers would wait for the cell to end: the kernel times out and says so
  }
  // Not awaited here: JupyterLab holds every kernel message until a comm target's
  // handler returns, and the subshell's own reply is one of them.
  const subshell = comm as Kernel.IComm & { subshellStarted: Promise<void> };
  subshell.subshellStarted
    .then(() => {
      if (!comm.isDisposed) {
        send(comm, { type: 'hello' });
      }
    })
    .catch((error: unknown) => console.warn('elelem-kernel: no comm subshell', error));
}

function send(comm: Kernel.IComm, reply: NotebookReply): void {
  comm.send(commData(reply));
}

async function handle(
  panel: NotebookPanel,
  comm: Kernel.IComm,
  state: ITurnState,
  data: unknown,
  watch: CodeWatch
): Promise<void> {
  const request = requestOf(data);
  if (request === null || comm.isDisposed) {
    return;
  }
  const id = request.id;
  send(comm, { id, ack: true });
  const reading = request.op === 'read';
  if (reading) {
    watch.start(); // in the read's own task: no change after it goes untold
  }
  try {
    const result = await answer(panel, state, request);
    if (!comm.isDisposed) {
      send(comm, { id, result });
    }
  } catch (error) {
    if (!comm.isDisposed) {
      send(comm, { id, error: error instanceof Error ? error.message : String(error) });
    }
  } finally {
    if (reading) {
      watch.answered();
    }
  }
}

/** What request `request` gives; an Error for an unknown one. */
async function answer(
  panel: NotebookPanel,
  state: ITurnState,
  request: NonNullable<ReturnType<typeof requestOf>>
): Promise<Result['result']> {
  const op = request.op;
  const known = request as NotebookRequest; // an unknown op is the default case
  switch (known.op) {
    case 'read':
      return { ...read(panel, known.outputs !== false), watched: true }; // see handle
    case 'edit':
      return edit(panel, state, known);
    case 'mark_undone':
      return markUndone(panel, String(known.turn), known.undone !== false);
    case 'revert':
      return revert(panel, known);
    case 'outputs':
      return showOutputs(panel, known);
    case 'ping':
      return { here: true }; // the page is here (elelem_kernel/jupyter/page_alive.py)
    default:
      throw new Error(`unknown request ${JSON.stringify(String(op))}`);
  }
}
