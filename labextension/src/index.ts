/**
 * elelem-kernel's frontend half: the open notebook tells its kernel its conversation.
 *
 * Each turn's frozen output carries its record in `metadata.elelem`. After a kernel
 * (re)start, the kernel would otherwise read them from the saved `.ipynb` on its own disk,
 * which fails for unsaved notebooks and for kernels that run elsewhere (gateways,
 * containers). Here the frontend sends them over the `elelem.restore` comm instead: the
 * records, the cell order and the notebook's path. It sends them when the kernel is ready
 * after a start or restart, and again before and after each elelem cell until the kernel
 * has acknowledged them (a Python kernel registers the comm target only at
 * `%load_ext elelem_kernel`); and before a `/load` cell with no path. The kernel's answer
 * also links the page: the kernel opens its standing `elelem.notebook` comm (live.ts). It also keeps the
 * notebook-level `metadata.elelem` summary up to date after each run, and loads the live
 * view's widget code before the first turn (warm.ts). The open notebook's
 * cells are the agent's to read and (with the person's yes) change: see live.ts; a cell
 * that fails offers "Fix with elelem": see fix.ts.
 */

import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  INotebookTracker,
  Notebook,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { KernelMessage } from '@jupyterlab/services';
import { showFrozenElsewhere } from './elsewhere';
import { offerFix } from './fix';
import { attachLive } from './live';
import { Json, RESTORE_TARGET, RestoreReason, commData } from './protocol';
import { recordCells, restoreData } from './records';
import { warmWidgets } from './warm';

/** Version of the comm message and of the notebook-level summary. */
const VERSION = 1;
/** Name of the Elelem kernel, whose every cell is a prompt. */
const ELELEM_KERNEL = 'elelem';
/** A `%%py` cell of the Elelem kernel: Python, where its other cells are Markdown prompts. */
const PY_CELL = /^\s*%%py\b/;
/** The editor's language for those cells (JupyterLab's IPython highlighting). */
const PYTHON_MIME = 'text/x-ipython';
/** A cell that names elelem (`%load_ext elelem_kernel`, a `%%elelem` prompt). */
const NAMES_ELELEM = /elelem/;
/** A cell that is `/load` alone (Elelem kernel) or `%elelem /load`. */
const LOAD_LINE = /^\s*(%elelem\s+)?\/load\s*$/m;

/** What the extension knows about one notebook's kernel. */
interface IState {
  delivered: boolean;
  startPending: boolean;
}

type Reason = Exclude<RestoreReason, 'undo'>;

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'elelem-kernel:restore',
  description: 'Sends the open notebook elelem records to its kernel',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const states = new WeakMap<NotebookPanel, IState>();

    const panelOf = (notebook: Notebook): NotebookPanel | null =>
      tracker.find(panel => panel.content === notebook) ?? null;

    tracker.widgetAdded.connect((_, panel) => {
      attachLive(panel);
      showFrozenElsewhere(panel);
      highlightPython(panel);
      const state: IState = { delivered: false, startPending: true };
      states.set(panel, state);
      const session = panel.sessionContext;
      session.kernelChanged.connect(() => {
        state.delivered = false;
        state.startPending = true;
      });
      session.statusChanged.connect((_, status) => {
        if (status === 'restarting' || status === 'autorestarting' || status === 'starting') {
          state.delivered = false;
          state.startPending = true;
        } else if (status === 'idle' && state.startPending) {
          state.startPending = false;
          // a kernel that runs elelem links this page now, before the first turn: also
          // when the page was reloaded or the notebook reopened while that kernel ran
          if (isElelemKernel(panel) || hasRecords(panel) || mentionsElelem(panel)) {
            send(panel, state, 'start');
          }
        }
      });
    });

    NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
      const panel = panelOf(notebook);
      const state = panel ? states.get(panel) : undefined;
      if (!panel || !state || cell.model.type !== 'code') {
        return;
      }
      const source = cell.model.sharedModel.getSource();
      if (LOAD_LINE.test(source)) {
        send(panel, state, 'load');
      } else if (!state.delivered && (isElelemKernel(panel) || NAMES_ELELEM.test(source))) {
        send(panel, state, 'cell');
      }
    });

    NotebookActions.executed.connect((_, { notebook, cell, success }) => {
      const panel = panelOf(notebook);
      if (panel) {
        summarize(panel);
        // After the cell that loaded elelem (`%load_ext elelem_kernel`): the kernel takes
        // the records now, and so links this page before the first turn (warm_up.py).
        const state = states.get(panel);
        const source = cell.model.type === 'code' ? cell.model.sharedModel.getSource() : '';
        if (state && !state.delivered && success && NAMES_ELELEM.test(source)) {
          send(panel, state, 'cell');
        }
        if (!success) {
          offerFix(panel, cell);
        }
      }
    });
  }
};

/** Highlight the Elelem kernel's `%%py` cells as Python: the kernel's language_info says
 * Markdown (its prompts), which would show a list comprehension as a link. Each cell's
 * editor language follows its first line, as the person types and whenever the notebook
 * sets every cell back to the kernel's language (a kernel start or change). */
function highlightPython(panel: NotebookPanel): void {
  const apply = (): void => {
    const notebook = panel.content;
    const elelem = isElelemKernel(panel);
    for (const cell of notebook.widgets) {
      if (cell.model.type !== 'code') {
        continue;
      }
      const python = elelem && PY_CELL.test(cell.model.sharedModel.getSource());
      const wanted = python ? PYTHON_MIME : notebook.codeMimetype;
      if (cell.model.mimeType !== wanted) {
        cell.model.mimeType = wanted;
      }
    }
  };
  panel.context.ready.then(() => {
    panel.content.model?.contentChanged.connect(apply);
    panel.sessionContext.kernelChanged.connect(apply);
    panel.sessionContext.statusChanged.connect(apply);
    apply();
  });
}

function isElelemKernel(panel: NotebookPanel): boolean {
  return panel.sessionContext.session?.kernel?.name === ELELEM_KERNEL;
}

function records(panel: NotebookPanel): Json[] {
  return recordCells(panel).flatMap(cell => cell.outputs.map(o => o.metadata.elelem));
}

function hasRecords(panel: NotebookPanel): boolean {
  return records(panel).length > 0;
}

/** Whether a code cell names elelem (`NAMES_ELELEM`). */
function mentionsElelem(panel: NotebookPanel): boolean {
  const cells = panel.content.model?.cells;
  if (!cells) {
    return false;
  }
  for (const cell of cells) {
    if (cell.type === 'code' && NAMES_ELELEM.test(cell.sharedModel.getSource())) {
      return true;
    }
  }
  return false;
}

/** Open the comm with the notebook's records; `delivered` once the kernel answers. */
function send(panel: NotebookPanel, state: IState, reason: Reason): void {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || !kernel.handleComms) {
    return;
  }
  warmWidgets(panel.content.rendermime); // this page will show turns: their widget code, now
  const commId = `elelem-restore-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  // Registered here so the kernel's answer (or its close, before `%load_ext`) finds it:
  // an unknown comm id makes JupyterLab log "Comm not found" in the browser console.
  const comm = kernel.createComm(RESTORE_TARGET, commId);
  comm.onMsg = () => {
    state.delivered = true;
  };
  // A plain comm_open on the main shell channel: it reaches the kernel before the
  // execute request that follows it (a comm subshell would not keep that order).
  const message = KernelMessage.createMessage({
    msgType: 'comm_open',
    channel: 'shell',
    username: kernel.username,
    session: kernel.clientId,
    content: {
      comm_id: commId,
      target_name: RESTORE_TARGET,
      data: commData(restoreData(panel, reason)) as KernelMessage.ICommOpenMsg['content']['data']
    }
  });
  try {
    kernel.sendShellMessage(message, false, true);
  } catch (error) {
    comm.dispose();
    console.warn('elelem-kernel: could not send the conversation to the kernel', error);
  }
}

/** Keep the notebook-level `metadata.elelem` summary in step with the records. */
function summarize(panel: NotebookPanel): void {
  const model = panel.content.model;
  const found = records(panel).filter(
    (r): r is { [key: string]: Json } => r !== null && typeof r === 'object'
  );
  if (!model || found.length === 0) {
    return;
  }
  const conversations: string[] = [];
  for (const record of found) {
    if (typeof record.conversation === 'string' && !conversations.includes(record.conversation)) {
      conversations.push(record.conversation);
    }
  }
  const last = found[found.length - 1];
  const summary = {
    v: VERSION,
    record_version: typeof last.v === 'number' ? last.v : null,
    conversations,
    active: typeof last.conversation === 'string' ? last.conversation : null,
    provider: typeof last.provider === 'string' ? last.provider : null,
    model: typeof last.model === 'string' ? last.model : null,
    records: found.length
  };
  if (JSON.stringify(model.getMetadata('elelem')) !== JSON.stringify(summary)) {
    model.setMetadata('elelem', summary);
  }
}

export default plugin;
