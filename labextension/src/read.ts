/**
 * The `read` request of the `elelem.notebook` comm: the cells as shown (unsaved edits
 * included): id, type, source, execution count and outputs; bounded here (long texts
 * cut, the first images kept whole for the model, other data replaced by its size) so a
 * notebook with huge outputs never floods the kernel.
 */

import { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { NbOutput } from './cells';
import { BoundedOutput, CellType, IDataOutput, ReadCell, ReadResult } from './protocol';

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
function boundOutput(output: NbOutput, room: IImageRoom): BoundedOutput {
  const kind = output.output_type;
  if (kind === 'stream') {
    return {
      output_type: kind,
      name: output.name as string,
      text: clip(textOf(output.text), MAX_TEXT)
    };
  }
  if (kind === 'error') {
    const trace = Array.isArray(output.traceback) ? output.traceback : [];
    return {
      output_type: kind,
      ename: clip(String(output.ename ?? ''), 1000),
      evalue: clip(String(output.evalue ?? ''), MAX_TEXT),
      traceback: trace.slice(-MAX_TRACEBACK).map((line: unknown) => clip(String(line), 4000))
    };
  }
  const data: IDataOutput['data'] = {};
  const sizes: IDataOutput['metadata']['elelem_sizes'] = {};
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
  const bounded: IDataOutput = {
    output_type: kind as IDataOutput['output_type'],
    data,
    metadata: { elelem_sizes: sizes }
  };
  if (kind === 'execute_result') {
    bounded.execution_count = (output.execution_count as number | null | undefined) ?? null;
  }
  return bounded;
}

/** The notebook as shown, its outputs too when `withOutputs`. */
export function read(panel: NotebookPanel, withOutputs: boolean): ReadResult {
  const model = panel.content.model!;
  const cells: ReadCell[] = [];
  let total = 0;
  const images: IImageRoom = { count: 0, chars: 0 };
  for (const cell of model.cells) {
    const full = cell.sharedModel.getSource();
    const room = total > MAX_TOTAL ? 2000 : MAX_SOURCE;
    const entry: ReadCell = {
      id: cell.id,
      cell_type: cell.type as CellType,
      source: full.slice(0, room)
    };
    if (full.length > room) {
      entry.clipped = true;
    }
    if (cell.type === 'code') {
      const code = cell as ICodeCellModel;
      entry.execution_count = code.executionCount ?? null;
      const outputs: BoundedOutput[] = [];
      entry.outputs = outputs;
      for (let i = 0; withOutputs && total <= MAX_TOTAL && i < code.outputs.length; i++) {
        const before = images.chars;
        const output = boundOutput(code.outputs.get(i).toJSON(), images);
        total += JSON.stringify(output).length - (images.chars - before); // images apart
        outputs.push(output);
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
