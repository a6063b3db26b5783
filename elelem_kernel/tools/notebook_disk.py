"""Notebook tools: read cells, edit them safely, and propose a cell to the person.

Cells are addressed by id (stable) or index (0-based; a string of digits that is no id
counts as an index). Edits keep the notebook valid (`nbformat.validate` before writing)
and are written atomically. The notebook open in the frontend is never rewritten on disk:
the editor holds its own copy and would clash; `propose_cell` is the way to add to it.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.errors import ToolError
from elelem_kernel.images import TYPES, ImageEntry
from elelem_kernel.text import clip, human_size, showing
from elelem_kernel.tools.bounds import MAX_BYTES, unified_diff
from elelem_kernel.tools.declaration import Result
from elelem_kernel.tools.protected import check_writable
from elelem_kernel.tools.regular_files import check_regular, open_regular
from elelem_kernel.tools.workspace import Workspace, atomic_write

if TYPE_CHECKING:
    from nbformat import NotebookNode

#: Longest text kept from one output (a stream, a result, a traceback).
OUTPUT_CHARS = 2_000
#: Output images the model is given per call (notebook_read, notebook_run).
MAX_IMAGES = 8
IMAGE_TYPES = frozenset(TYPES)
CELL_TYPES = ("code", "markdown", "raw")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def load(ws: Workspace, path: str) -> tuple[Path, NotebookNode]:
    """The notebook at `path` as an nbformat v4 node, with errors that say how to recover."""
    import nbformat

    target = ws.resolve(path)
    rel = ws.relative(target)
    check_regular(target, rel)
    if not target.is_file():
        what = "a folder" if target.is_dir() else "missing"
        raise ToolError(f'"{rel}" is {what}. Call list with pattern="*.ipynb" to find notebooks.')
    try:
        with open_regular(target, rel) as f:
            text = f.read().decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError:
        raise ToolError(f'"{rel}" is not a notebook: it is not UTF-8 text.') from None
    except json.JSONDecodeError as e:
        raise ToolError(
            f'"{rel}" is not a valid notebook: invalid JSON at line {e.lineno}, column {e.colno} '
            f"({e.msg}). Read it with read and repair it with edit, or restore it from git."
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ToolError(f'"{rel}" is JSON but not a notebook: it has no "cells" list.')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
    except Exception as e:
        raise ToolError(f'"{rel}" could not be read as a notebook: {e}') from None
    return target, nb


def find_cell(nb: NotebookNode, cell: int | str, rel: str) -> int:
    """The index of the cell given by id or index; `ToolError` listing what exists."""
    count = len(nb.cells)
    if isinstance(cell, str):
        for i, c in enumerate(nb.cells):
            if c.get("id") == cell:
                return i
        if not re.fullmatch(r"-?\d+", cell.strip()):
            ids = [c.get("id") for c in nb.cells if c.get("id")]
            shown = ", ".join(ids[:30]) + (" ..." if len(ids) > 30 else "")
            raise ToolError(
                f'no cell with id "{cell}" in {rel}. '
                + (f"Its cell ids are: {shown}." if ids else "Its cells have no ids; use indexes.")
                + " Call notebook_read to see the cells."
            )
        cell = int(cell)
    if not -count <= cell < count:
        span = f"0-{count - 1}" if count else "none"
        raise ToolError(f"cell index {cell} is out of range: {rel} has {count} cells ({span})")
    return cell % count


def ordinal(n: int) -> str:
    """`1st`, `2nd`, `3rd`, `11th`, `22nd`."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def cell_label(cell: NotebookNode, index: int) -> str:
    """A cell as the person sees it: `cell [5]` (the count in its prompt), else `the 6th
    cell`; never its id or a 0-based index, which nobody sees on the page."""
    count = cell.get("execution_count") if cell.get("cell_type") == "code" else None
    if isinstance(count, int) and not isinstance(count, bool):
        return f"cell [{count}]"
    return f"the {ordinal(index + 1)} cell"


def read_notebook(
    ws: Workspace, path: str, cells: list[int | str] | None = None, outputs: bool = True
) -> Result:
    """Cells with index, id, type, source and short output summaries; bounded."""
    target, nb = load(ws, path)
    rel = ws.relative(target)
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    return {"path": rel, **read_cells(nb, rel, cells, outputs), "kernel": kernel}


def read_cells(nb: NotebookNode, rel: str, cells: list[int | str] | None, outputs: bool) -> Result:
    """The chosen cells of `nb` as the model sees them, within `MAX_BYTES`."""
    indexes = [find_cell(nb, c, rel) for c in cells] if cells else range(len(nb.cells))
    shown: list[Result] = []
    size = 0
    pictures: list[ImageEntry] = []
    for i in indexes:
        mine: list[ImageEntry] = list(pictures)
        entry = describe_cell(nb.cells[i], i, outputs, mine)
        cost = len(json.dumps(entry))
        if shown and size + cost > MAX_BYTES:
            break
        shown.append(entry)
        pictures = mine
        size += cost
    result: Result = {"cells": shown, "count": len(nb.cells)}
    if pictures:
        result["_images"] = pictures
    if len(shown) < len(indexes):
        rest = list(indexes)[len(shown) :]
        result["truncated"] = showing(
            len(shown),
            len(indexes),
            "cells",
            f"call notebook_read with cells={rest[:20]} for the next ones (or outputs=false "
            "for less text)",
        )
    return result


def describe_cell(
    cell: NotebookNode, index: int, outputs: bool = True, images: list[ImageEntry] | None = None
) -> Result:
    """One cell as the model sees it; its output images added to `images` when given."""
    entry: Result = {"index": index, "id": cell.get("id"), "type": cell.cell_type}
    entry["shown_as"] = cell_label(cell, index)
    entry["source"] = _text(cell.source)
    if cell.cell_type == "code":
        entry["execution_count"] = cell.get("execution_count")
        if outputs and cell.get("outputs"):
            entry["outputs"] = summarize_outputs(cell.outputs, images)
    return entry


def summarize_outputs(outputs: list[Any], images: list[ImageEntry] | None = None) -> list[str]:
    """Outputs as short text: streams, text/plain results, errors; blobs only named.

    With `images` (a list to fill): each PNG, JPEG, GIF or WebP output, whole, is added to
    it (up to `MAX_IMAGES` in all) and named `[image N]`, for the model to see.
    """
    out = []
    for o in outputs:
        kind = o.get("output_type")
        if kind == "stream":
            out.append(f"{o.get('name', 'stream')}: {clip(_text(o.get('text')), OUTPUT_CHARS)}")
        elif kind in ("execute_result", "display_data"):
            # html.parser only when outputs are read, not for declaring the tools
            from elelem_kernel.tools.displays import DEFAULT_REPR, html_text

            data = o.get("data", {})
            label = f"Out[{o.get('execution_count')}]" if kind == "execute_result" else "display"
            text = clip(_text(data.get("text/plain", "")), OUTPUT_CHARS)
            if "text/html" in data and (not text.strip() or DEFAULT_REPR.match(text.strip())):
                text = html_text(_text(data["text/html"]), OUTPUT_CHARS)  # its repr says nothing
            sizes = o.get("metadata", {}).get("elelem_sizes", {})  # set by cell_outputs
            others = []
            for m, v in data.items():
                if m == "text/plain":
                    continue
                if images is not None and m in IMAGE_TYPES and m not in sizes:
                    if len(images) < MAX_IMAGES:
                        images.append({"mime_type": m, "data": "".join(_text(v).split())})
                        others.append(f"[image {len(images)}]")
                        continue
                    others.append(f"{m} (not sent: more than {MAX_IMAGES} images)")
                    continue
                others.append(f"{m} ({human_size(sizes.get(m, len(_text(v))))})")
            out.append(f"{label}: {text}" + (f" [also {', '.join(others)}]" if others else ""))
        elif kind == "error":
            trace = _ANSI.sub("", "\n".join(o.get("traceback", [])))
            head = f"{o.get('ename')}: {o.get('evalue')}"
            out.append(head + ("\n" + clip(trace, OUTPUT_CHARS) if trace else ""))
    return out


def edit_notebook(
    ws: Workspace,
    path: str,
    protected: Path | None = None,
    **change: Any,
) -> Result:
    """Apply one change (see `plan_notebook_edit`) and write the notebook atomically."""
    import nbformat

    target, nb, before, after, summary = plan_notebook_edit(ws, path, protected, **change)
    atomic_write(target, (nbformat.writes(nb) + "\n").encode("utf-8"))
    rel = ws.relative(target)
    return {
        **summary,
        "path": rel,
        "cells": len(nb.cells),
        "diff": unified_diff(before, after, rel),
    }


def edit_preview(ws: Workspace, path: str, protected: Path | None = None, **change: Any) -> str:
    """The diff `edit_notebook` would make, or why it would fail."""
    try:
        target, _, before, after, summary = plan_notebook_edit(ws, path, protected, **change)
    except ToolError as e:
        return f"notebook_edit {path}: would fail: {e}"
    return f"{summary['action']} in {ws.relative(target)}\n" + unified_diff(
        before, after, ws.relative(target)
    )


def plan_notebook_edit(
    ws: Workspace,
    path: str,
    protected: Path | None = None,
    **change: Any,
) -> tuple[Path, NotebookNode, str, str, Result]:
    """Check and compute one edit: (file, new notebook, text before, text after, summary).

    One action per call: `old`+`new` (exact replace inside the cell), `source` (whole
    source), `insert` ("before"/"after" `cell`, or at the start/end without one; with
    `source` and `cell_type`), `delete`, `move_to` (new index), or `cell_type` alone.
    """
    target = ws.resolve(path)
    check_writable(ws, path, target)
    rel = ws.relative(target)
    if protected is not None and target == Path(protected).resolve():
        raise ToolError(
            f'"{rel}" is the notebook open in the frontend; rewriting it on disk would clash '
            "with the open editor. Use propose_cell(source) to offer the person a new cell."
        )
    target, nb = load(ws, path)
    _ensure_ids(nb)
    before = as_text(nb)
    summary = change_cells(nb, rel, **change)
    after = as_text(nb)
    return target, nb, before, after, summary


def change_cells(
    nb: NotebookNode,
    rel: str,
    cell: int | str | None = None,
    old: str | None = None,
    new: str | None = None,
    source: str | None = None,
    insert: str | None = None,
    cell_type: str | None = None,
    delete: bool = False,
    move_to: int | None = None,
) -> Result:
    """Make one change to `nb` in memory (checked, valid); a summary of what it did."""
    action = _one_action(old, new, source, insert, cell_type, delete, move_to)
    deleted = None
    if action == "insert":
        index = _insert_cell(nb, rel, cell, insert, cell_type, source)
    else:
        if cell is None:
            raise ToolError(f"{action} needs cell (an id or an index)")
        index = find_cell(nb, cell, rel)
        deleted = nb.cells[index] if action == "delete" else None
        index = _change_cell(nb, rel, index, action, old, new, source, cell_type, move_to)
    _check_valid(nb, rel)
    changed = deleted if deleted is not None else nb.cells[index]
    return {"action": action, "cell": {"index": index, "id": changed.get("id")}}


def _one_action(
    old: str | None,
    new: str | None,
    source: str | None,
    insert: str | None,
    cell_type: str | None,
    delete: bool,
    move_to: int | None,
) -> str:
    """The one change the arguments ask for: insert, delete, move, replace, set source or
    set type; ToolError when they ask for none, several, or an unknown cell type."""
    actions = [
        name
        for name, given in (
            ("insert", insert is not None),
            ("delete", bool(delete)),
            ("move", move_to is not None),
            ("replace", old is not None or new is not None),
            ("set source", source is not None and insert is None),
        )
        if given
    ]
    if len(actions) > 1:
        raise ToolError(f"give one change per call, not {' and '.join(actions)}")
    if not actions and cell_type is None:
        raise ToolError(
            "nothing to do: pass old+new, source, insert ('before'/'after'), delete=true, "
            "move_to or cell_type"
        )
    if cell_type is not None and cell_type not in CELL_TYPES:
        raise ToolError(f"cell_type must be one of {', '.join(CELL_TYPES)}, not {cell_type!r}")
    return actions[0] if actions else "set type"


def _insert_cell(
    nb: NotebookNode,
    rel: str,
    cell: int | str | None,
    insert: str | None,
    cell_type: str | None,
    source: str | None,
) -> int:
    """Insert a new cell "before" or "after" `cell` (the start or the end without one);
    its index."""
    if insert not in ("before", "after"):
        raise ToolError(f"insert must be 'before' or 'after', not {insert!r}")
    if cell is None:
        index = 0 if insert == "before" else len(nb.cells)
    else:
        index = find_cell(nb, cell, rel) + (insert == "after")
    made = _new_cell(cell_type or "code", source or "", _fresh_id(nb))
    nb.cells.insert(index, made)
    return index


def _change_cell(
    nb: NotebookNode,
    rel: str,
    index: int,
    action: str,
    old: str | None,
    new: str | None,
    source: str | None,
    cell_type: str | None,
    move_to: int | None,
) -> int:
    """Delete, move, replace text in, set the source of or retype cell `index`; the index
    it has afterwards."""
    current = nb.cells[index]
    if action == "delete":
        del nb.cells[index]
    elif action == "move":
        assert move_to is not None
        moved = nb.cells.pop(index)
        index = max(0, min(move_to if move_to >= 0 else len(nb.cells) + 1 + move_to, len(nb.cells)))
        nb.cells.insert(index, moved)
    elif action == "replace":
        current.source = _replace(_text(current.source), old, new, index, rel)
    elif action == "set source":
        current.source = source
    if cell_type is not None and action in ("replace", "set source", "set type"):
        if cell_type != current.cell_type:
            changed = _new_cell(cell_type, _text(current.source), current.get("id"))
            changed.metadata = current.metadata
            nb.cells[index] = changed
    return index


def _check_valid(nb: NotebookNode, rel: str) -> None:
    """ToolError unless `nb` is a valid notebook (so nothing invalid is written)."""
    import nbformat

    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as e:
        raise ToolError(
            f"the change would leave {rel} invalid ({e.message}); nothing was written"
        ) from None


def as_text(nb: NotebookNode) -> str:
    """The notebook as percent-format text, what edit diffs are made from."""
    parts = []
    for c in nb.cells:
        parts.append(f"# %% [{c.cell_type}] id={c.get('id')}\n{_text(c.source)}\n")
    return "".join(parts)


def _replace(text: str, old: str | None, new: str | None, index: int, rel: str) -> str:
    if not old or new is None:
        raise ToolError("replacing text needs both old (non-empty) and new")
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old was not found in cell {index} of {rel}; call notebook_read and copy the "
            "text exactly, or pass source to replace the whole cell"
        )
    if count > 1:
        raise ToolError(
            f"old appears {count} times in cell {index} of {rel}; include more of the "
            "surrounding text to make it unique, or pass source to replace the whole cell"
        )
    return text.replace(old, new)


def _new_cell(kind: str, source: str, cell_id: str | None) -> NotebookNode:
    import nbformat

    make = {
        "code": nbformat.v4.new_code_cell,
        "markdown": nbformat.v4.new_markdown_cell,
        "raw": nbformat.v4.new_raw_cell,
    }[kind]
    cell: NotebookNode = make(source, id=cell_id) if cell_id else make(source)
    return cell


def _ensure_ids(nb: NotebookNode) -> None:
    """Cell ids need nbformat 4.5; older notebooks are upgraded when they are edited."""
    if (nb.nbformat, nb.nbformat_minor) < (4, 5):
        nb.nbformat_minor = 5
    for c in nb.cells:
        if not c.get("id"):
            c["id"] = _fresh_id(nb)


def _fresh_id(nb: NotebookNode) -> str:
    # uuid (and platform) only once a notebook's cell lacks an id: not on a turn's path
    import uuid

    taken = {c.get("id") for c in nb.cells}
    while (new := uuid.uuid4().hex[:8]) in taken:
        pass
    return new


def _text(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value)
