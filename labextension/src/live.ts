/**
 * The open notebook as the agent's workspace: the `elelem.notebook` comm.
 *
 * The kernel opens this comm once per turn (elelem_kernel/jupyter/notebook_comm.py) with
 * the turn's cell id. Only the notebook that sent the turn answers: its kernel connection
 * sent the execute request (the parent header's session is its client id) and it holds
 * that cell. It says `hello` once its comm subshell is up (answers then reach the kernel
 * while the cell runs), acknowledges each request at once and answers it when done:
 *
 * - `read`: the cells as shown (unsaved edits included): id, type, source, execution
 *   count and outputs; bounded here (long texts cut, the first images kept whole for the
 *   model, other data replaced by its size) so a notebook with huge outputs never floods
 *   the kernel.
 * - `outputs`: what the kernel's run of a cell (`notebook_run`) printed, shown in that
 *   cell with its execution count, as if the person had run it.
 * - `mark_undone`: set `undone` (or clear it, for `/redo`) on a turn's record in its frozen output.
 * - `revert`: undo one change of an earlier turn (`/undo`), only where the cell is as
 *   that turn left it.
 * - `edit`: one change, applied through the notebook's shared model (so undo, saving and
 *   real-time collaboration see an ordinary edit), at once or, when `ask`, after the
 *   person accepts the diff shown in the cell (`@codemirror/merge`). Cells the agent
 *   changed carry `metadata.elelem.turn` and a small badge.
 *
 * Cell sources and outputs are only ever put in the page as text (CodeMirror documents,
 * `textContent`), never as HTML.
 */

import { unifiedMergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { PageConfig } from '@jupyterlab/coreutils';
import { Kernel, KernelMessage } from '@jupyterlab/services';

export const LIVE_TARGET = 'elelem.notebook';
/** Metadata key of a cell the agent changed. */
const MARK = 'elelem';
const MAX_SOURCE = 200_000;
const MAX_TEXT = 20_000;
const MAX_TRACEBACK = 40;
const MAX_TOTAL = 4_000_000;
/** Output images a read hands over whole (as the file form's `notebook_read` does), and
 * the base64 characters of one image and of all of them. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const MAX_IMAGES = 8;
const MAX_IMAGE = 4_000_000;
const MAX_IMAGE_TOTAL = 12_000_000;

/** What one read has left to give of images. */
interface IImageRoom {
  count: number;
  chars: number;
}

type Decision = { decision: 'accepted' | 'rejected' | 'applied'; reason?: string };

/** What one turn's comm keeps: its prompt cell, the proposals waiting and the turn's
 * standing choice. */
interface ITurnState {
  cell: string;
  all: 'accept' | 'reject' | null;
  pending: Set<() => void>;
}

/** What this extension can do for the kernel: `notebook` is the `elelem.notebook` comm,
 * the open notebook as the agent's workspace. */
const FEATURES = ['notebook'];

/** What the `elelem.restore` comm carries (elelem_kernel/jupyter/restore_comm.py): the
 * notebook's records in cell order, its path and what this extension offers. */
export function restoreData(panel: NotebookPanel, reason: string): any {
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
export function recordCells(panel: NotebookPanel): any[] {
  const model = panel.content.model;
  if (!model) {
    return [];
  }
  const found: any[] = [];
  for (const cell of model.cells) {
    const outputs: any[] = [];
    const area: any = cell.type === 'code' ? (cell as any).outputs : null;
    for (let i = 0; area && i < area.length; i++) {
      const metadata: any = area.get(i).metadata;
      if (metadata && 'elelem' in metadata) {
        outputs.push({ metadata: { elelem: metadata.elelem } });
      }
    }
    found.push({ id: cell.id, cell_type: cell.type, outputs });
  }
  return found;
}

/** Register the comm target on the panel's kernel connection (again after a change). */
export function attachLive(panel: NotebookPanel): void {
  const register = () => {
    const kernel = panel.sessionContext.session?.kernel;
    if (kernel && kernel.handleComms) {
      kernel.registerCommTarget(LIVE_TARGET, (comm, msg) => opened(panel, kernel, comm, msg));
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
  const data: any = msg.content.data ?? {};
  const session = (msg.parent_header as any)?.session;
  if (session && session !== kernel.clientId) {
    return; // another client's turn: not ours to answer, nor to close
  }
  const model = panel.content.model;
  if (!model || typeof data.cell !== 'string' || !findIndex(panel, data.cell).found) {
    return;
  }
  const state: ITurnState = { cell: data.cell, all: null, pending: new Set() };
  // Not returned: JupyterLab holds every later message of the kernel until a comm
  // handler's promise settles, and an edit's waits for the person. The live view's
  // updates (its clocks, the card saying whom it waits for) must go on meanwhile.
  comm.onMsg = message => {
    void handle(panel, comm, state, message.content.data as any);
  };
  comm.onClose = () => withdraw(state);
  panel.disposed.connect(() => {
    withdraw(state);
    if (!comm.isDisposed) {
      comm.close();
    }
  });
  if (!kernel.supportsSubshells) {
    return; // answers would wait for the cell to end: the kernel times out and says so
  }
  // Not awaited here: JupyterLab holds every kernel message until a comm target's
  // handler returns, and the subshell's own reply is one of them.
  (comm as any).subshellStarted
    .then(() => {
      if (!comm.isDisposed) {
        comm.send({ type: 'hello' });
      }
    })
    .catch((error: unknown) => console.warn('elelem-kernel: no comm subshell', error));
}

async function handle(
  panel: NotebookPanel,
  comm: Kernel.IComm,
  state: ITurnState,
  request: any
): Promise<void> {
  const id = request?.id;
  if (typeof id !== 'number' || comm.isDisposed) {
    return;
  }
  comm.send({ id, ack: true });
  try {
    let result: any;
    if (request.op === 'read') {
      result = read(panel, request.outputs !== false);
    } else if (request.op === 'edit') {
      result = await edit(panel, state, request);
    } else if (request.op === 'mark_undone') {
      result = markUndone(panel, String(request.turn), request.undone !== false);
    } else if (request.op === 'revert') {
      result = revert(panel, request);
    } else if (request.op === 'outputs') {
      result = showOutputs(panel, request);
    } else if (request.op === 'ping') {
      result = true; // the page is here (its ack says so; elelem_kernel/jupyter/page_alive.py)
    } else {
      throw new Error(`unknown request ${JSON.stringify(String(request.op))}`);
    }
    if (!comm.isDisposed) {
      comm.send({ id, result });
    }
  } catch (error) {
    if (!comm.isDisposed) {
      comm.send({ id, error: error instanceof Error ? error.message : String(error) });
    }
  }
}

// -- read ----------------------------------------------------------------------------

function clip(text: string, limit: number): string {
  if (text.length <= limit) {
    return text;
  }
  const half = Math.floor(limit / 2);
  return `${text.slice(0, half)}\n… [${text.length - limit} characters cut] …\n${text.slice(-half)}`;
}

function textOf(value: unknown): string {
  return Array.isArray(value) ? value.join('') : typeof value === 'string' ? value : '';
}

/** One output with long texts cut, its images kept while `room` lasts, and every other
 * non-text value replaced by its size. */
function boundOutput(output: any, room: IImageRoom): any {
  const kind = output.output_type;
  if (kind === 'stream') {
    return { output_type: kind, name: output.name, text: clip(textOf(output.text), MAX_TEXT) };
  }
  if (kind === 'error') {
    const trace = Array.isArray(output.traceback) ? output.traceback : [];
    return {
      output_type: kind,
      ename: clip(String(output.ename ?? ''), 1000),
      evalue: clip(String(output.evalue ?? ''), MAX_TEXT),
      traceback: trace.slice(-MAX_TRACEBACK).map((line: any) => clip(String(line), 4000))
    };
  }
  const data: any = {};
  const sizes: any = {};
  for (const [mime, value] of Object.entries(output.data ?? {})) {
    const image = IMAGE_TYPES.includes(mime) ? textOf(value) : '';
    if (mime === 'text/plain') {
      data[mime] = clip(textOf(value), MAX_TEXT);
    } else if (image && image.length <= MAX_IMAGE && room.count < MAX_IMAGES &&
      room.chars + image.length <= MAX_IMAGE_TOTAL) {
      data[mime] = image;
      room.count += 1;
      room.chars += image.length;
    } else {
      data[mime] = '';
      sizes[mime] = typeof value === 'string' ? value.length : JSON.stringify(value).length;
    }
  }
  const bounded: any = { output_type: kind, data, metadata: { elelem_sizes: sizes } };
  if (kind === 'execute_result') {
    bounded.execution_count = output.execution_count ?? null;
  }
  return bounded;
}

function read(panel: NotebookPanel, withOutputs: boolean): any {
  const model = panel.content.model!;
  const cells: any[] = [];
  let total = 0;
  const images: IImageRoom = { count: 0, chars: 0 };
  for (const cell of model.cells) {
    const full = cell.sharedModel.getSource();
    const room = total > MAX_TOTAL ? 2000 : MAX_SOURCE;
    const entry: any = { id: cell.id, cell_type: cell.type, source: full.slice(0, room) };
    if (full.length > room) {
      entry.clipped = true;
    }
    if (cell.type === 'code') {
      const code: any = cell;
      entry.execution_count = code.executionCount ?? null;
      entry.outputs = [];
      for (let i = 0; withOutputs && total <= MAX_TOTAL && i < code.outputs.length; i++) {
        const before = images.chars;
        const output = boundOutput(code.outputs.get(i).toJSON(), images);
        total += JSON.stringify(output).length - (images.chars - before); // images apart
        entry.outputs.push(output);
      }
    }
    total += entry.source.length;
    cells.push(entry);
  }
  return {
    path: panel.context.path,
    dirty: panel.context.model.dirty,
    kernel: panel.sessionContext.session?.kernel?.name ?? null,
    cells
  };
}

// -- outputs of a cell the agent ran -----------------------------------------------

/** Put what the kernel's run of a cell printed into that cell, with its count. */
function showOutputs(panel: NotebookPanel, request: any): any {
  const { index, found } = findIndex(panel, String(request.cell));
  if (!found) {
    throw new Error(`cell ${request.cell} is no longer in the notebook`);
  }
  const cell: any = panel.content.model!.cells.get(index);
  if (cell.type !== 'code') {
    throw new Error(`cell ${request.cell} is no longer a code cell`);
  }
  cell.outputs.clear();
  for (const output of Array.isArray(request.outputs) ? request.outputs : []) {
    cell.outputs.add(output);
  }
  cell.executionCount =
    typeof request.execution_count === 'number' ? request.execution_count : null;
  return { shown: true };
}

// -- revert (/undo) ------------------------------------------------------------------

/** Undo one change of a turn where the cell is as the turn left it. */
function revert(panel: NotebookPanel, change: any): any {
  const shared = panel.content.model!.sharedModel;
  const { index, found } = findIndex(panel, String(change.cell));
  const source = found ? shared.cells[index].getSource() : null;
  if (change.action === 'delete') {
    if (found) {
      return { reverted: false, why: 'a cell with its id is back already' };
    }
    shared.insertCell(Math.min(change.from_index ?? change.index, shared.cells.length), {
      id: change.cell,
      cell_type: change.cell_type ?? 'code',
      source: change.before ?? ''
    } as any);
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
    const metadata = { ...(shared.cells[index].getMetadata() as any) };
    shared.transact(() => {
      shared.deleteCell(index);
      shared.insertCell(index, {
        id: change.cell,
        cell_type: change.cell_type,
        source: change.before ?? '',
        metadata
      } as any);
    });
  } else {
    const cell: any = shared.cells[index];
    shared.transact(() => {
      cell.setSource(change.before ?? '');
      cell.deleteMetadata(MARK);
      if (cell.cell_type === 'code') {
        // the outputs of the code the turn wrote do not belong to the code put back
        cell.setOutputs(Array.isArray(change.outputs) ? change.outputs : []);
        cell.execution_count = change.outputs ? (change.execution_count ?? null) : null;
      }
    });
  }
  markAll(panel);
  return { reverted: true };
}

/** Mark a turn's record in its frozen output as undone or not (kept when the notebook is saved). */
function markUndone(panel: NotebookPanel, turn: string, undone: boolean): any {
  let marked = 0;
  for (const cell of panel.content.model!.cells) {
    const area: any = cell.type === 'code' ? (cell as any).outputs : null;
    for (let i = 0; area && i < area.length; i++) {
      const output = area.get(i).toJSON();
      const record = output.metadata?.elelem;
      if (record && typeof record === 'object' && record.turn === turn) {
        const metadata = { ...output.metadata, elelem: { ...record, undone } };
        area.set(i, { ...output, metadata });
        marked++;
      }
    }
  }
  return { marked };
}

// -- edit ----------------------------------------------------------------------------

function findIndex(panel: NotebookPanel, id: string): { index: number; found: boolean } {
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

function widgetOf(panel: NotebookPanel, id: string): Cell | undefined {
  return panel.content.widgets.find(widget => widget.model.id === id);
}

/** Fail unless cell `id` still holds `before` (what the kernel's change was made from). */
function check(panel: NotebookPanel, request: any): number {
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

async function edit(panel: NotebookPanel, state: ITurnState, request: any): Promise<Decision> {
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

/** At most this many characters of a changed cell's outputs are kept to put back on undo. */
const MAX_KEPT_OUTPUTS = 64_000;

/** A code cell's outputs and execution count before the agent changes its source, for
 * `/undo` to put back with the source (none when they are too large to keep). */
function outputsBefore(panel: NotebookPanel, request: any): any {
  if (request.action === 'insert' || request.action === 'move' || request.action === 'delete') {
    return {};
  }
  const { index, found } = findIndex(panel, String(request.cell));
  const cell: any = found ? panel.content.model!.sharedModel.cells[index] : null;
  if (!cell || cell.cell_type !== 'code') {
    return {};
  }
  const outputs = cell.getOutputs();
  if (JSON.stringify(outputs).length > MAX_KEPT_OUTPUTS) {
    return {};
  }
  return { outputs_before: outputs, execution_count_before: cell.execution_count ?? null };
}

function mark(request: any): any {
  return { turn: request.turn ?? null, change: request.action };
}

function apply(panel: NotebookPanel, request: any): void {
  const shared = panel.content.model!.sharedModel;
  if (request.action === 'insert') {
    const after = request.after ? findIndex(panel, String(request.after)) : null;
    const index = after && after.found ? after.index + 1 : Math.min(request.index, shared.cells.length);
    shared.insertCell(index, {
      id: request.new_id,
      cell_type: request.cell_type,
      source: request.source,
      metadata: { [MARK]: mark(request) }
    } as any);
  } else {
    const { index } = findIndex(panel, String(request.cell));
    const cell = shared.cells[index];
    if (request.action === 'delete') {
      shared.deleteCell(index);
    } else if (request.action === 'move') {
      shared.moveCell(index, Math.max(0, Math.min(request.to, shared.cells.length - 1)));
      cell.setMetadata(MARK, mark(request));
    } else if (request.cell_type !== cell.cell_type) {
      const metadata = { ...(cell.getMetadata() as any), [MARK]: mark(request) };
      shared.transact(() => {
        shared.deleteCell(index);
        shared.insertCell(index, {
          id: request.cell,
          cell_type: request.cell_type,
          source: request.source,
          metadata
        } as any);
      });
    } else {
      cell.setSource(request.source);
      cell.setMetadata(MARK, mark(request));
    }
  }
  markAll(panel);
}

/** Show the change in the notebook and wait for the person's Accept or Reject. */
function propose(panel: NotebookPanel, state: ITurnState, request: any): Promise<Decision> {
  return new Promise<Decision>(resolve => {
    const box = document.createElement('div');
    box.className = 'elelem-proposal';
    const title = document.createElement('div');
    title.className = 'elelem-proposal-title';
    const what: any = {
      change: 'change this cell',
      replace: 'change this cell',
      'set source': 'change this cell',
      'set type': `make this a ${request.cell_type} cell`,
      insert: `insert a new ${request.cell_type} cell here`,
      delete: 'delete this cell',
      move: `move this cell to be the ${ordinal(Number(request.to) + 1)} cell`
    };
    title.textContent = `elelem proposes to ${what[request.action] ?? request.action}`;
    box.appendChild(title);
    let view: EditorView | null = null;
    if (request.action !== 'move') {
      const diff = document.createElement('div');
      diff.className = 'elelem-proposal-diff';
      box.appendChild(diff);
      const after = request.action === 'delete' ? '' : String(request.source ?? '');
      const before = request.action === 'insert' ? '' : String(request.before ?? '');
      view = new EditorView({
        parent: diff,
        state: EditorState.create({
          doc: after,
          extensions: [
            unifiedMergeView({ original: before, mergeControls: false, gutter: true }),
            EditorView.editable.of(false),
            EditorState.readOnly.of(true),
            EditorView.lineWrapping
          ]
        })
      });
    }
    const reason = document.createElement('input');
    reason.className = 'elelem-proposal-reason';
    reason.placeholder = 'reason (optional, sent to the agent if you reject)';
    const buttons = document.createElement('div');
    buttons.className = 'elelem-proposal-buttons';
    const target = request.action === 'insert' ? undefined : widgetOf(panel, String(request.cell));
    let line: HTMLElement | null = null;
    const finish = (decision: Decision) => {
      state.pending.delete(cancel);
      view?.destroy();
      box.remove();
      line?.remove();
      target?.node.classList.remove('elelem-deleting');
      resolve(decision);
    };
    const cancel = () =>
      finish({ decision: 'rejected', reason: 'the turn ended before the person decided' });
    const reject = () => ({ decision: 'rejected' as const, reason: reason.value });
    const acceptAll = () => {
      state.all = 'accept';
      finish({ decision: 'accepted' });
    };
    const rejectAll = () => {
      state.all = 'reject';
      finish(reject());
    };
    buttons.appendChild(button('Accept', 'accept', () => finish({ decision: 'accepted' })));
    buttons.appendChild(button('Reject', 'reject', () => finish(reject())));
    buttons.appendChild(button('Accept all', 'accept-all', acceptAll, ALL_TIPS.accept));
    buttons.appendChild(button('Reject all', 'reject-all', rejectAll, ALL_TIPS.reject));
    box.appendChild(reason);
    box.appendChild(buttons);
    state.pending.add(cancel);
    place(panel, request, box, target);
    line = waitingLine(panel, state, request, box, acceptAll, rejectAll);
  });
}

/** What Accept all and Reject all do, said where the buttons are. */
const ALL_TIPS = {
  accept: 'Accept this change and every other edit elelem proposes for the rest of this turn',
  reject: 'Reject this change and every other edit elelem proposes for the rest of this turn'
};

function button(label: string, kind: string, onClick: () => void, tip?: string): HTMLElement {
  const element = document.createElement('button');
  element.className = `jp-Button elelem-proposal-${kind}`;
  element.textContent = label;
  element.onclick = onClick;
  if (tip) {
    element.title = tip;
  }
  return element;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 10 && tens <= 20 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as any)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** The line in the turn's card while a diff waits: "waiting for you: cell [5] above", a
 * link that scrolls to the diff, and Accept all / Reject all for the rest of the turn. */
function waitingLine(
  panel: NotebookPanel,
  state: ITurnState,
  request: any,
  box: HTMLElement,
  acceptAll: () => void,
  rejectAll: () => void
): HTMLElement | null {
  const turn = widgetOf(panel, state.cell);
  if (!turn) {
    return null;
  }
  const cards = Array.from(turn.node.querySelectorAll<HTMLElement>('.elelem-card'));
  const card = cards.reverse().find(c => (c.textContent ?? '').trim().startsWith('notebook_edit'));
  const host = card ?? turn.node.querySelector<HTMLElement>('.jp-OutputArea');
  if (!host) {
    return null;
  }
  const line = document.createElement('div');
  line.className = 'elelem-waiting';
  line.appendChild(document.createTextNode('waiting for you: '));
  const link = document.createElement('a');
  link.href = '#';
  link.className = 'elelem-waiting-link';
  link.textContent = `${String(request.label ?? 'the cell')} ${String(request.where ?? '')}`.trim();
  link.title = 'Show the proposed change';
  link.onclick = event => {
    event.preventDefault();
    const shown = box.closest('.jp-Cell');
    const index = panel.content.widgets.findIndex(widget => widget.node === shown);
    const scrolled = index >= 0 ? panel.content.scrollToItem(index) : Promise.resolve();
    void scrolled.then(() => box.scrollIntoView({ block: 'center' }));
  };
  line.appendChild(link);
  const buttons = document.createElement('span');
  buttons.className = 'elelem-proposal-buttons';
  buttons.appendChild(button('Accept all', 'accept-all', acceptAll, ALL_TIPS.accept));
  buttons.appendChild(button('Reject all', 'reject-all', rejectAll, ALL_TIPS.reject));
  line.appendChild(buttons);
  host.appendChild(line);
  return line;
}

/** Put the proposal in the changed cell, or where a new cell would go. */
function place(panel: NotebookPanel, request: any, box: HTMLElement, target?: Cell): void {
  if (target) {
    if (request.action === 'delete') {
      target.node.classList.add('elelem-deleting');
    }
    target.node.appendChild(box);
    void panel.content.scrollToItem(panel.content.widgets.indexOf(target));
    return;
  }
  box.classList.add('elelem-new-cell');
  const after = request.after ? widgetOf(panel, String(request.after)) : undefined;
  if (after) {
    after.node.appendChild(box);
    void panel.content.scrollToItem(panel.content.widgets.indexOf(after));
  } else {
    panel.content.node.prepend(box);
  }
}

function withdraw(state: ITurnState): void {
  for (const cancel of [...state.pending]) {
    cancel();
  }
}

/** How many times, and how far apart, to look again for a turn's output not yet rendered. */
const UNDO_RETRIES = 40;
const UNDO_RETRY_MS = 250;

/** An Undo button under the last turn that changed something and is not undone, when the
 * kernel says it would undo that turn (it signed the record: `elelem.undoable`, see
 * elelem_kernel/jupyter/undoable_comm.py; a shared notebook's record gets no button). It
 * runs `/undo` in a new cell below (what `/undo` reverts is exactly that turn). The turn is
 * found in the notebook's model; a reopened notebook renders its cells and their outputs
 * after the model is ready, so when the turn's output is not on the page yet this looks
 * again shortly, a bounded number of times, one look pending per notebook. */
function undoButton(panel: NotebookPanel, tries = 0): void {
  let last: { cell: any; output: number; record: any } | null = null;
  for (const cell of panel.content.model?.cells ?? []) {
    const outputs: any = cell.type === 'code' ? (cell as any).outputs : null;
    for (let i = 0; outputs && i < outputs.length; i++) {
      const record = (outputs.get(i).metadata || {}).elelem;
      if (record && Array.isArray(record.changes) && record.changes.length && !record.undone) {
        last = { cell, output: i, record };
      }
    }
  }
  undoButtons.get(panel)?.remove();
  undoButtons.delete(panel);
  if (last === null) {
    return;
  }
  const { cell, output, record } = last as { cell: any; output: number; record: any };
  const verdict = undoable(panel, record);
  if (verdict !== true) {
    return; // not ours to undo, or the kernel has not answered yet (it draws again then)
  }
  const widget = widgetOf(panel, cell.id);
  const child: HTMLElement | undefined = (widget as any)?.outputArea?.widgets?.[output]?.node;
  // under the turn's rendered output, not beside it as a third column of the output row
  const node = child?.querySelector<HTMLElement>('.jp-OutputArea-output') ?? child;
  if (!widget || !node) {
    if (tries < UNDO_RETRIES && !panel.isDisposed && !undoRetries.has(panel)) {
      const retry = () => {
        undoRetries.delete(panel);
        undoButton(panel, tries + 1);
      };
      undoRetries.set(panel, setTimeout(retry, UNDO_RETRY_MS));
    }
    return;
  }
  const button = document.createElement('button');
  button.className = 'jp-Button elelem-undo';
  button.textContent = 'Undo this turn';
  button.title = "Revert this turn's changes to files and cells (not Python variables)";
  button.onclick = () => undoTurn(panel, button, record.turn, cell.id);
  node.appendChild(button);
  undoButtons.set(panel, button);
}

/** Ask the kernel to undo `turn` (the `undo` op of `elelem.undoable`: no cell is added);
 * what `/undo` says is shown under the turn, which the kernel marks undone. */
function undoTurn(panel: NotebookPanel, button: HTMLButtonElement, turn: string, cell: string): void {
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || !kernel.handleComms) {
    return;
  }
  button.disabled = true;
  button.textContent = 'Undoing…';
  let said = false;
  const done = (text: string) => {
    said = true;
    undoNotes.set(turn, text);
    button.remove();
    markAll(panel);
  };
  try {
    const comm = kernel.createComm(UNDOABLE_TARGET);
    comm.onMsg = message => done(String((message.content.data as any)?.text ?? ''));
    comm.onClose = () => {
      if (!said) {
        done('Not undone: the kernel did not answer (is elelem still loaded?).');
      }
    };
    // with the notebook's records, so a fresh kernel restores the conversation to undo
    comm.open({ ...restoreData(panel, 'undo'), op: 'undo', turn, cell });
  } catch (error) {
    done(`Not undone: ${String(error)}`);
  }
}

/** What `/undo` said of each turn undone from this page (shown under the turn). */
const undoNotes = new Map<string, string>();

/** Mark each undone turn's output as such (live and after reopening), with what `/undo`
 * said when it was undone from this page. */
function markUndoneTurns(panel: NotebookPanel): void {
  for (const widget of panel.content.widgets) {
    const outputs: any = widget.model.type === 'code' ? (widget.model as any).outputs : null;
    for (let i = 0; outputs && i < outputs.length; i++) {
      const record = (outputs.get(i).metadata || {}).elelem;
      const child: HTMLElement | undefined = (widget as any).outputArea?.widgets?.[i]?.node;
      if (!child || !record || typeof record !== 'object') {
        continue;
      }
      const undone = record.undone === true;
      const said = undoNotes.get(String(record.turn));
      child.classList.toggle('elelem-turn-undone', undone);
      let note = child.querySelector<HTMLElement>(':scope .elelem-undone-note');
      if (!undone && said === undefined) {
        note?.remove();
        continue;
      }
      if (!note) {
        note = document.createElement('div');
        note.className = 'elelem-undone-note';
        (child.querySelector('.jp-OutputArea-output') ?? child).appendChild(note);
      }
      note.textContent = said ?? 'Undone: this turn was reverted and is no longer sent to the model.';
    }
  }
}

/** The comm target through which the kernel says which turns it would undo. */
const UNDOABLE_TARGET = 'elelem.undoable';

/** What each kernel said of a record (by its turn and signature): true, false, 'asked',
 * or 'silent' (no answer: elelem is not loaded in that kernel yet, so it is asked again
 * after the kernel's next execution). A restart forgets every answer. */
const undoVerdicts = new WeakMap<
  Kernel.IKernelConnection,
  Map<string, boolean | 'asked' | 'silent'>
>();

function verdictsOf(kernel: Kernel.IKernelConnection): Map<string, boolean | 'asked' | 'silent'> {
  let verdicts = undoVerdicts.get(kernel);
  if (!verdicts) {
    const made = new Map<string, boolean | 'asked' | 'silent'>();
    kernel.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'autorestarting') {
        made.clear();
      } else if (status === 'idle') {
        for (const [key, verdict] of made) {
          if (verdict === 'silent') {
            made.delete(key);
          }
        }
      }
    });
    undoVerdicts.set(kernel, made);
    verdicts = made;
  }
  return verdicts;
}

/** Whether the panel's kernel would undo `record`: its verdict, or undefined while it is
 * asked (once per kernel and record; the button is drawn when the answer comes). */
function undoable(panel: NotebookPanel, record: any): boolean | undefined {
  if (typeof record.turn !== 'string' || typeof record.signature !== 'string') {
    return false;
  }
  const kernel = panel.sessionContext.session?.kernel;
  if (!kernel || !kernel.handleComms) {
    return undefined; // asked when the kernel is there (attachLive's `register`)
  }
  const verdicts = verdictsOf(kernel);
  const key = `${record.turn} ${record.signature}`;
  const known = verdicts.get(key);
  if (known === 'asked') {
    return undefined;
  }
  if (known !== undefined) {
    return known === true;
  }
  verdicts.set(key, 'asked');
  const answered = (verdict: boolean | 'silent') => {
    if (verdicts.get(key) === 'asked') {
      verdicts.set(key, verdict);
      if (!panel.isDisposed && verdict === true) {
        undoButton(panel);
      }
    }
  };
  const { turn, conversation, changes, signature } = record;
  try {
    const comm = kernel.createComm(UNDOABLE_TARGET);
    comm.onMsg = message => {
      const turns: any = (message.content.data as any)?.undoable;
      answered(Array.isArray(turns) && turns.includes(turn));
    };
    comm.onClose = () => answered('silent');
    comm.open({ v: 1, records: [{ turn, conversation, changes, signature }] });
  } catch (error) {
    answered('silent');
  }
  return undefined;
}

/** The Undo button each notebook shows (one at most). */
const undoButtons = new WeakMap<NotebookPanel, HTMLElement>();

/** A notebook's one pending look for its turn's output (edits while it waits add none). */
const undoRetries = new WeakMap<NotebookPanel, ReturnType<typeof setTimeout>>();

/** The badge on every cell the agent changed (its metadata says which turn). */
function markAll(panel: NotebookPanel): void {
  undoButton(panel);
  requestAnimationFrame(() => markUndoneTurns(panel)); // after re-rendered outputs are on the page
  for (const widget of panel.content.widgets) {
    const found: any = widget.model.getMetadata(MARK);
    const marked = !!found && typeof found === 'object' && 'turn' in found;
    widget.node.classList.toggle('elelem-agent-cell', marked);
    if (marked) {
      widget.node.dataset.elelemTurn = String(found.turn ?? '');
      widget.node.title = `changed by elelem (turn ${String(found.turn ?? '?')})`;
    }
  }
}

let styled = false;

function addStyle(): void {
  if (styled) {
    return;
  }
  styled = true;
  const style = document.createElement('style');
  style.textContent = `
.elelem-agent-cell { position: relative; }
.elelem-agent-cell::after {
  content: 'elelem'; position: absolute; top: 26px; left: 8px; font-size: 10px;
  padding: 0 5px; border-radius: 6px; color: var(--jp-ui-inverse-font-color1, #fff);
  background: var(--jp-brand-color1, #1976d2); opacity: 0.75; pointer-events: none;
}
.elelem-proposal {
  margin: 4px 0 6px 64px; padding: 6px 8px; border: 1px solid var(--jp-brand-color1, #1976d2);
  border-radius: 4px; background: var(--jp-layout-color1, #fff);
  color: var(--jp-ui-font-color1, #000); font-size: var(--jp-ui-font-size1, 13px);
}
.elelem-proposal-title { font-weight: 600; margin-bottom: 4px; }
.elelem-proposal-diff { border: 1px solid var(--jp-border-color2, #ddd); margin-bottom: 4px;
  max-height: 420px; overflow: auto; font-family: var(--jp-code-font-family, monospace); }
.elelem-proposal-reason { width: 60%; margin-right: 8px; }
.elelem-proposal-buttons { display: inline-flex; gap: 6px; margin-top: 4px; }
.elelem-proposal-buttons button { padding: 2px 10px; cursor: pointer; }
.elelem-proposal-accept, .elelem-proposal-accept-all {
  background: var(--jp-success-color1, #388e3c); color: #fff; border: none; }
.elelem-proposal-reject, .elelem-proposal-reject-all {
  background: var(--jp-error-color1, #d32f2f); color: #fff; border: none; }
.elelem-deleting .jp-InputArea-editor { text-decoration: line-through; opacity: 0.55; }
.elelem-deleting .cm-content { text-decoration: line-through; }
.elelem-undo { margin: 2px 0 6px 0; padding: 2px 10px; cursor: pointer; border: none;
  border-radius: 3px; color: #fff; background: var(--jp-brand-color1, #1976d2); }
.elelem-undo:hover { background: var(--jp-brand-color0, #0d47a1); }
.elelem-turn-undone .jp-RenderedHTMLCommon { opacity: 0.55; }
.elelem-undone-note { margin: 4px 0 6px 0; padding: 4px 8px; white-space: pre-wrap;
  border-left: 3px solid var(--jp-warn-color1, #f57c00); font-size: var(--jp-ui-font-size1, 13px);
  color: var(--jp-ui-font-color1, #000); background: var(--jp-layout-color2, #f5f5f5); }
.elelem-waiting { margin: 2px 0 6px 0; color: var(--jp-warn-color1, #c77c00); }
.elelem-waiting-link { text-decoration: underline; margin-right: 10px; }
.elelem-fix { margin: 4px 0; padding: 2px 10px; cursor: pointer; }
`;
  document.head.appendChild(style);
}
