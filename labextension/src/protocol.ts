/**
 * The messages of elelem's three comms, as types: one JSON Schema per comm says what each
 * carries (elelem_kernel/jupyter/comm_schemas/<target>.json) and every part of a schema
 * with a `title` is the type of that name here (tests/jupyter/test_comm_protocol_ts.py
 * checks both ways with tsc: each schema example compiles as its type, and what the schema
 * refuses does not).
 *
 * - `elelem.restore` (opened by the frontend, index.ts): the notebook's records, once per
 *   kernel start and before and after elelem cells; the kernel answers `Received`.
 * - `elelem.notebook` (opened by the kernel once per turn, live.ts, and once standing with
 *   no cell after a restore): requests on the open notebook; the frontend says `Hello`,
 *   acknowledges and answers each.
 * - `elelem.undoable` (opened by the frontend, undo.ts): which turns the kernel would
 *   undo, or undo one; the kernel answers once.
 *
 * Types named `I...` are parts a schema spells inline (an edit's common fields, the
 * kinds of a bounded output). What arrives from the kernel is `unknown` until narrowed
 * here.
 */

import { Kernel } from '@jupyterlab/services';

export const RESTORE_TARGET = 'elelem.restore';
export const NOTEBOOK_TARGET = 'elelem.notebook';
export const UNDOABLE_TARGET = 'elelem.undoable';

/** Any JSON value: a turn record, as the notebook holds it, is checked by the kernel. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type CellType = 'code' | 'markdown' | 'raw';

// -- elelem.restore ------------------------------------------------------------------

export type RestoreReason = 'start' | 'cell' | 'load' | 'undo';

/** A cell's id and type, and the `metadata.elelem` of each of its outputs that has one. */
export interface RecordCell {
  id: string;
  cell_type: CellType;
  outputs: Array<{ metadata: { elelem: Json } }>;
}

/** What the notebook tells its kernel (also part of `UndoRequest`). */
export interface RestoreData {
  v: 1;
  reason: RestoreReason;
  path: string;
  root: string;
  features: string[];
  notebook: { cells: RecordCell[] };
}

/** The `elelem.restore` comm_open's data. */
export type Restore = RestoreData;

/** The kernel's answer: how many cells it kept. */
export interface Received {
  received: number;
}

// -- elelem.notebook: the kernel's side ----------------------------------------------

/** The comm_open's data: the turn's cell and the turn. */
export interface NotebookOpen {
  v: 1;
  cell: string | null;
  turn: string | null;
}

export type EditAction = 'insert' | 'delete' | 'move' | 'replace' | 'set source' | 'set type';

/** An nbformat output, whole. */
export interface NotebookOutput {
  output_type: 'stream' | 'display_data' | 'execute_result' | 'error';
  [key: string]: unknown;
}

export interface ReadRequest {
  id: number;
  op: 'read';
  outputs?: boolean;
}

/** What every edit request says: the person's word needed or not, and how the cell is
 * named to them (`cell [5]`, above or below the turn's cell). */
interface IEditBase {
  id: number;
  op: 'edit';
  ask: boolean;
  turn: string | null;
  label: string;
  where: 'above' | 'below';
}

export interface InsertEdit extends IEditBase {
  action: 'insert';
  index: number;
  after: string | null;
  new_id: string | null;
  cell_type: CellType;
  source: string;
}

export interface SourceEdit extends IEditBase {
  action: 'replace' | 'set source' | 'set type';
  cell: string;
  before: string;
  source: string;
  cell_type: CellType;
}

export interface DeleteEdit extends IEditBase {
  action: 'delete';
  cell: string;
  before: string;
}

export interface MoveEdit extends IEditBase {
  action: 'move';
  cell: string;
  before: string;
  to: number;
}

export type EditRequest = InsertEdit | SourceEdit | DeleteEdit | MoveEdit;

export interface OutputsRequest {
  id: number;
  op: 'outputs';
  cell: string;
  outputs: NotebookOutput[];
  execution_count: number | null;
}

/** One change of an earlier turn, as its record keeps it, to take back (or forward). */
export interface RevertRequest {
  id: number;
  op: 'revert';
  kind?: 'cell';
  action: EditAction;
  cell: string;
  index?: number | null;
  from_index?: number | null;
  label?: string;
  cell_type?: CellType;
  before?: string | null;
  after?: string | null;
  outputs?: NotebookOutput[];
  execution_count?: number | null;
}

export interface MarkUndoneRequest {
  id: number;
  op: 'mark_undone';
  turn: string | null;
  undone: boolean;
}

/** Is the page still there? Its ack says so (elelem_kernel/jupyter/page_alive.py). */
export interface PingRequest {
  id: number;
  op: 'ping';
}

export type NotebookRequest =
  | ReadRequest
  | EditRequest
  | OutputsRequest
  | RevertRequest
  | MarkUndoneRequest
  | PingRequest;

// -- elelem.notebook: the frontend's side --------------------------------------------

export interface Hello {
  type: 'hello';
}

export interface Changed {
  type: 'changed';
}

export interface Ack {
  id: number;
  ack: true;
}

export interface Result {
  id: number;
  result: ReadResult | EditResult | OutputsResult | RevertResult | MarkUndoneResult | PingResult;
}

export interface Failure {
  id: number;
  error: string;
}

export type NotebookReply = Hello | Changed | Ack | Result | Failure;

export interface ReadResult {
  path: string;
  dirty: boolean;
  kernel: string | null;
  cells: ReadCell[];
  watched?: true;
}

export interface ReadCell {
  id: string;
  cell_type: CellType;
  source: string;
  clipped?: true;
  execution_count?: number | null;
  outputs?: BoundedOutput[];
}

export interface IStreamOutput {
  output_type: 'stream';
  name: string;
  text: string;
}

export interface IErrorOutput {
  output_type: 'error';
  ename: string;
  evalue: string;
  traceback: string[];
}

/** Data whose values are text: an image kept whole, or '' with its size in `elelem_sizes`. */
export interface IDataOutput {
  output_type: 'display_data' | 'execute_result' | 'update_display_data';
  data: { [mime: string]: string };
  metadata: { elelem_sizes: { [mime: string]: number } };
  execution_count?: number | null;
}

export type BoundedOutput = IStreamOutput | IErrorOutput | IDataOutput;

export interface EditResult {
  decision: 'accepted' | 'rejected' | 'applied';
  reason?: string;
  outputs_before?: NotebookOutput[];
  execution_count_before?: number | null;
}

export interface OutputsResult {
  shown: true;
}

export interface RevertResult {
  reverted: boolean;
  why?: string;
}

export interface MarkUndoneResult {
  marked: number;
}

export interface PingResult {
  here: true;
}

// -- elelem.undoable -----------------------------------------------------------------

/** The parts of a turn record its signature covers. */
export interface UndoCandidate {
  turn: string;
  conversation?: Json;
  changes: Json[];
  signature: string;
}

export interface UndoableQuery {
  v: 1;
  records: UndoCandidate[];
}

/** Undo `turn` (the Undo button), with the notebook's records for a fresh kernel. */
export interface UndoRequest extends RestoreData {
  op: 'undo';
  turn: string;
  cell: string;
}

export type UndoableOpen = UndoableQuery | UndoRequest;

export interface UndoableTurns {
  undoable: string[];
}

export interface UndoText {
  text: string;
}

export type UndoableAnswer = UndoableTurns | UndoText;

// -- on the wire ---------------------------------------------------------------------

/** What a comm carries. */
export type CommData = Parameters<Kernel.IComm['send']>[0];

/** A message as comm data. The types above are JSON by construction (they mirror the
 * schemas), which TypeScript cannot see through interfaces with optional fields. */
export function commData(message: NotebookReply | Restore | UndoableOpen): CommData {
  return message as unknown as CommData;
}

/** `value` as an object whose fields can be looked at, or null. */
export function asObject(value: unknown): { [key: string]: unknown } | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as { [key: string]: unknown })
    : null;
}

/** A request of the kernel's, narrowed as far as the frontend relies on: an object with a
 * numeric `id` (its `op` is dispatched on, an unknown one answered with an error). */
export function requestOf(data: unknown): (NotebookRequest | { id: number; op: unknown }) | null {
  const found = asObject(data);
  return found && typeof found.id === 'number'
    ? (found as NotebookRequest | { id: number; op: unknown })
    : null;
}

/** The `elelem.notebook` comm_open's data, when it names a cell. */
export function openingOf(data: unknown): NotebookOpen & { cell: string } | null {
  const found = asObject(data);
  return found && typeof found.cell === 'string'
    ? (found as unknown as NotebookOpen & { cell: string })
    : null;
}

/** The turns an `elelem.undoable` answer says the kernel would undo, or null. */
export function undoableTurns(data: unknown): string[] | null {
  const turns = asObject(data)?.undoable;
  return Array.isArray(turns) ? turns : null;
}

/** The text of an `elelem.undoable` undo answer ('' when there is none). */
export function undoText(data: unknown): string {
  return String(asObject(data)?.text ?? '');
}
