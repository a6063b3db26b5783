"""Notebooks as the model should see them in a review: cell sources with ids, no outputs.

A changed notebook becomes one section per changed cell:

    ## cell 3 id=1a2b3c (code): modified
    @@ -1,2 +1,2 @@
     x = 1
    -y = x + 1
    +y = x / 0

Line numbers are within the cell. Outputs, execution counts and metadata are never shown.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Cell:
    """One cell's identity and source: what a review of a notebook needs."""

    index: int  #: 1-based position in its notebook
    id: str | None
    type: str
    source: str

    @property
    def label(self) -> str:
        ident = f" id={self.id}" if self.id else ""
        return f"cell {self.index}{ident} ({self.type})"


def cells(raw: bytes | str | None) -> list[Cell]:
    """The cells of a notebook file; ValueError when it is not notebook JSON."""
    if raw is None:
        return []
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"not valid notebook JSON: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ValueError("not a notebook: no list of cells")
    out = []
    for i, cell in enumerate(data["cells"], 1):
        if not isinstance(cell, dict):
            raise ValueError(f"not a notebook: cell {i} is not an object")
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(str(s) for s in source)
        ident = cell.get("id")
        out.append(
            Cell(
                i,
                ident if isinstance(ident, str) else None,
                str(cell.get("cell_type", "code")),
                str(source),
            )
        )
    return out


def cell_source(raw: bytes | str | None, cell_id: str) -> str | None:
    """The source of the cell with id `cell_id` (or `#N` for the N-th cell), if any."""
    try:
        found = cells(raw)
    except ValueError:
        return None
    for cell in found:
        if cell.id == cell_id or f"#{cell.index}" == cell_id:
            return cell.source
    return None


def _pairs(old: list[Cell], new: list[Cell]) -> list[tuple[Cell | None, Cell | None]]:
    if old and new and all(c.id for c in old + new):
        by_id = {c.id: c for c in old}
        pairs: list[tuple[Cell | None, Cell | None]] = [(by_id.get(c.id), c) for c in new]
        new_ids = {c.id for c in new}
        return pairs + [(c, None) for c in old if c.id not in new_ids]
    matcher = difflib.SequenceMatcher(
        None, [(c.type, c.source) for c in old], [(c.type, c.source) for c in new], autojunk=False
    )
    pairs = []
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        olds, news = old[i1:i2], new[j1:j2]
        for k in range(max(len(olds), len(news))):
            pairs.append((olds[k] if k < len(olds) else None, news[k] if k < len(news) else None))
    return pairs


def _hunks(a: str, b: str) -> list[str]:
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=3)
    return [line for i, line in enumerate(lines) if i >= 2]


def diff(old_raw: bytes | str | None, new_raw: bytes | str | None) -> tuple[str, int]:
    """The cell-level diff text of two notebook versions and the number of changed cells."""
    sections: list[str] = []
    for before, after in _pairs(cells(old_raw), cells(new_raw)):
        if after is None and before is not None:
            sections.append(f"## {before.label}: deleted")
            sections.extend(_hunks(before.source, ""))
        elif before is None and after is not None:
            sections.append(f"## {after.label}: added")
            sections.extend(_hunks("", after.source))
        elif before is not None and after is not None:
            if before.source == after.source and before.type == after.type:
                continue
            kind = "modified" if before.type == after.type else f"modified (was {before.type})"
            sections.append(f"## {after.label}: {kind}")
            sections.extend(_hunks(before.source, after.source))
    changed = sum(1 for s in sections if s.startswith("## cell "))
    if not changed:
        sections.append(
            "## only outputs, execution counts or metadata changed: no cell source to review"
        )
    return "\n".join(sections) + "\n", changed
