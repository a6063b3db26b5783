/**
 * An edit the person decides on: the diff shown in the cell it changes (or where a new
 * cell would go), with Accept, Reject and a reason, and Accept all / Reject all for the
 * rest of the turn; the turn's card says it waits for them and links to the diff. Cell
 * sources are only ever put in the page as text (CodeMirror documents), never as HTML.
 */

import { unifiedMergeView } from '@codemirror/merge';
import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { widgetOf } from './cells';
import { EditRequest, EditResult } from './protocol';

/** What one turn's comm keeps: its prompt cell, the proposals waiting and the turn's
 * standing choice. */
export interface ITurnState {
  cell: string;
  all: 'accept' | 'reject' | null;
  pending: Set<() => void>;
}

/** What Accept all and Reject all do, said where the buttons are. */
const ALL_TIPS = {
  accept: 'Accept this change and every other edit elelem proposes for the rest of this turn',
  reject: 'Reject this change and every other edit elelem proposes for the rest of this turn'
};

const SUFFIXES: { [last: number]: string } = { 1: 'st', 2: 'nd', 3: 'rd' };

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 10 && tens <= 20 ? 'th' : SUFFIXES[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** What the proposal's title says the agent would do. */
function proposes(request: EditRequest): string {
  switch (request.action) {
    case 'replace':
    case 'set source':
      return 'change this cell';
    case 'set type':
      return `make this a ${request.cell_type} cell`;
    case 'insert':
      return `insert a new ${request.cell_type} cell here`;
    case 'delete':
      return 'delete this cell';
    case 'move':
      return `move this cell to be the ${ordinal(Number(request.to) + 1)} cell`;
    default:
      return String((request as { action: unknown }).action);
  }
}

/** A read-only unified diff of `before` → `after` in `parent` (CodeMirror's merge view). */
export function diffView(parent: HTMLElement, before: string, after: string): EditorView {
  return new EditorView({
    parent,
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

/** Show the change in the notebook and wait for the person's Accept or Reject. */
export function propose(
  panel: NotebookPanel,
  state: ITurnState,
  request: EditRequest
): Promise<EditResult> {
  return new Promise<EditResult>(resolve => {
    const box = document.createElement('div');
    box.className = 'elelem-proposal';
    const title = document.createElement('div');
    title.className = 'elelem-proposal-title';
    title.textContent = `elelem proposes to ${proposes(request)}`;
    box.appendChild(title);
    let view: EditorView | null = null;
    if (request.action !== 'move') {
      const diff = document.createElement('div');
      diff.className = 'elelem-proposal-diff';
      box.appendChild(diff);
      const after = request.action === 'delete' ? '' : String(request.source ?? '');
      const before = request.action === 'insert' ? '' : String(request.before ?? '');
      view = diffView(diff, before, after);
    }
    const reason = document.createElement('input');
    reason.className = 'elelem-proposal-reason';
    reason.placeholder = 'reason (optional, sent to the agent if you reject)';
    const buttons = document.createElement('div');
    buttons.className = 'elelem-proposal-buttons';
    const target = request.action === 'insert' ? undefined : widgetOf(panel, String(request.cell));
    let line: HTMLElement | null = null;
    const finish = (decision: EditResult) => {
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

/** The line in the turn's card while a diff waits: "waiting for you: cell [5] above", a
 * link that scrolls to the diff, and Accept all / Reject all for the rest of the turn. */
function waitingLine(
  panel: NotebookPanel,
  state: ITurnState,
  request: EditRequest,
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
function place(panel: NotebookPanel, request: EditRequest, box: HTMLElement, target?: Cell): void {
  if (target) {
    if (request.action === 'delete') {
      target.node.classList.add('elelem-deleting');
    }
    target.node.appendChild(box);
    void panel.content.scrollToItem(panel.content.widgets.indexOf(target));
    return;
  }
  box.classList.add('elelem-new-cell');
  const after = request.action === 'insert' && request.after ? widgetOf(panel, String(request.after)) : undefined;
  if (after) {
    after.node.appendChild(box);
    void panel.content.scrollToItem(panel.content.widgets.indexOf(after));
  } else {
    panel.content.node.prepend(box);
  }
}

/** Take back every proposal the turn still shows (each then counts as rejected). */
export function withdraw(state: ITurnState): void {
  for (const cancel of [...state.pending]) {
    cancel();
  }
}
