"""Append a cell to a notebook this process wrote, without rewriting the whole file.

`ipynb_json.write` lays a notebook out as `nbformat.write` does, sorted-key JSON with
one-space indents, so its cells end at the first line that is exactly ` ],` and only the
notebook's metadata follows. After a full write, `remember` notes where that is and what
follows; while the file still has that size, mtime and ending, `append` writes the new
cell's JSON (cut from `ipynb_json.dumps` of a one-cell notebook, so it is the same
bytes) and the old ending from there. The file is then byte for byte what a full rewrite
would give. Anything else (the file changed, the cell id is taken, nothing remembered)
means the caller rewrites in full. A write that fails (a full disk) puts the old ending
back before the error goes on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from elelem_kernel.store import ipynb_json

#: Where the cells of an nbformat-written notebook end, and the separator between cells.
_CELLS_END = b"\n ],\n"
_BETWEEN = b",\n"
#: Notebooks remembered at once (a process writes one or a few).
_KEEP = 8


class _Written(NamedTuple):
    mtime_ns: int
    size: int
    cells_end: int  #: offset of the newline that ends the last cell
    tail: bytes  #: the bytes from `cells_end` to the end of the file
    elelem: bool  #: the notebook's cells are bare prompts (the Elelem kernel's)
    ids: frozenset[str]


_last: dict[str, _Written] = {}


def remember(path: Path, notebook: Mapping[str, object], elelem: bool) -> None:
    """Note the layout of the notebook just written in full to `path`."""
    _last.pop(str(path), None)
    data = Path(path).read_bytes()
    end = data.find(_CELLS_END)
    cells = notebook["cells"]
    if end < 0 or not isinstance(cells, list) or not cells:  # the next is written in full
        return
    ids = frozenset(str(c.get("id")) for c in cells if isinstance(c, dict) and c.get("id"))
    _remember(path, end, data[end:], elelem, ids)


def elelem_if_unchanged(path: Path, expected_mtime_ns: int | None) -> bool | None:
    """The remembered `elelem` flag if `path` is as this process last wrote it, else None."""
    written = _last.get(str(path))
    if written is None or expected_mtime_ns != written.mtime_ns:
        return None
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size != written.size:
                return None
            f.seek(written.cells_end)
            if f.read(len(written.tail) + 1) != written.tail:
                return None
    except OSError:
        return None
    return written.elelem


def append(path: Path, cell: Mapping[str, object]) -> bool:
    """Write `cell` after the last cell of `path` in place; False when it cannot.

    Call only after `elelem_if_unchanged` said yes (and right after, with the same file).
    """
    written = _last.get(str(path))
    if written is None or str(cell.get("id")) in written.ids:
        return False
    piece = _BETWEEN + cell_json(cell)
    with open(path, "r+b") as f:
        f.seek(written.cells_end)
        try:
            f.write(piece + written.tail)
            f.truncate()
            f.flush()
        except OSError:  # a full disk: put the old ending back (a few bytes), then say so
            _last.pop(str(path), None)
            f.seek(written.cells_end)
            f.write(written.tail)
            f.truncate()
            raise
    ids = written.ids | {str(cell.get("id"))}
    _remember(path, written.cells_end + len(piece), written.tail, written.elelem, ids)
    return True


def cell_json(cell: Mapping[str, object]) -> bytes:
    """`cell` as `nbformat.write` lays it out inside a notebook's cells list."""
    text = ipynb_json.dumps(ipynb_json.new_notebook(cells=[dict(cell)])).encode("utf-8")
    start = text.index(b'"cells": [\n') + len(b'"cells": [\n')
    return text[start : text.index(_CELLS_END)]


def forget(path: Path) -> None:
    """Forget `path` (it was written some other way)."""
    _last.pop(str(path), None)


def _remember(path: Path, cells_end: int, tail: bytes, elelem: bool, ids: frozenset[str]) -> None:
    stat = os.stat(path)
    _last.pop(str(path), None)
    while len(_last) >= _KEEP:
        _last.pop(next(iter(_last)))
    _last[str(path)] = _Written(stat.st_mtime_ns, stat.st_size, cells_end, tail, elelem, ids)
