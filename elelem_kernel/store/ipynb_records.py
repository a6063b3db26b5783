"""Reading a notebook file for its turn records: forgiving, never raising, never running.

Each turn's frozen output carries its record in `metadata["elelem"]` (docs/design.md,
"The record"). A damaged file still gives what can be read (a file that is not
JSON is salvaged record by record), with one warning saying what happened.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from elelem_kernel.names import RECORD_KEY
from elelem_kernel.store import ipynb_json
from elelem_kernel.store.rebuild import Cell


class NotebookCell(NamedTuple):
    """One cell as restore needs it: its id, its source (to find a re-run), its records."""

    id: str | None
    source: str | None
    records: list[object]


def read_cells(path: Path) -> tuple[list[Cell], list[str]]:
    """Each cell's id and record candidates, in order, plus warnings; never raises."""
    cells, warnings = read_notebook(Path(path))
    return [(cell.id, cell.records) for cell in cells], warnings


def cells_of(notebook: object, name: str) -> tuple[list[NotebookCell], list[str]]:
    """The cells of a notebook's JSON (as read from a file or sent by the frontend) and
    warnings; never raises. Each cell needs only `id` and `outputs[].metadata.elelem`."""
    cells, problem = _walk(notebook)
    return cells, [f"{name} {problem}; nothing restored"] if problem else []


def read_notebook(path: Path) -> tuple[list[NotebookCell], list[str]]:
    """The cells of the notebook file at `path` and warnings; never raises."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return [], [f"{path.name} not found ({path}); nothing restored"]
    except OSError as error:
        return [], [f"cannot read {path} ({error.strerror or error}); nothing restored"]
    text = raw.decode("utf-8", errors="replace")
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError) as error:
        reason = str(error) if isinstance(error, ValueError) else "nested too deeply"
        cells = _salvage(text)
        found = any(cell.records for cell in cells)
        outcome = "restored what could be salvaged" if found else "nothing restored"
        return cells, [f"{path.name} is not valid JSON ({reason}); {outcome}"]
    cells, problem = _walk(notebook)
    if problem:
        return cells, [f"{path.name} {problem}; nothing restored"]
    problem = ipynb_json.problem(notebook)
    if problem:
        return cells, [
            f"{path.name} is not a valid notebook ({problem}); restored what could be read"
        ]
    return cells, []


def _walk(notebook: object) -> tuple[list[NotebookCell], str | None]:
    if not isinstance(notebook, dict):
        return [], f"is not a notebook (its top level is a JSON {type(notebook).__name__})"
    raw_cells = _raw_cells(notebook)
    if not isinstance(raw_cells, list):
        return [], "has no list of cells"
    return [
        _cell(raw) if isinstance(raw, dict) else NotebookCell(None, None, []) for raw in raw_cells
    ], None


def _raw_cells(notebook: Mapping[str, object]) -> object:
    worksheets = notebook.get("worksheets")
    if "cells" in notebook or not isinstance(worksheets, list):
        return notebook.get("cells")
    sheets = [s for s in worksheets if isinstance(s, dict)]  # nbformat 3
    return [c for s in sheets if isinstance(s.get("cells"), list) for c in s["cells"]]


def _cell(raw: Mapping[str, object]) -> NotebookCell:
    found = raw.get("id")
    cell_id = found if isinstance(found, str) else None
    source = raw.get("source") if raw.get("source") is not None else raw.get("input")
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    records: list[object] = []
    outputs = raw.get("outputs")
    for output in outputs if isinstance(outputs, list) else []:
        metadata = output.get("metadata") if isinstance(output, dict) else None
        if isinstance(metadata, dict) and RECORD_KEY in metadata:
            records.append(metadata[RECORD_KEY])
    return NotebookCell(cell_id, source if isinstance(source, str) else None, records)


_CELL_START = re.compile(r'"cell_type"\s*:')
_CELL_ID_KEY = re.compile(r'"id"\s*:\s*"([a-zA-Z0-9_-]{1,64})"')
_RECORD_KEY = re.compile(re.escape(json.dumps(RECORD_KEY)) + r"\s*:\s*")


def _salvage(text: str) -> list[NotebookCell]:
    """Cells and the records that still parse in a damaged file (nbformat's key order)."""
    starts = [match.start() for match in _CELL_START.finditer(text)]
    decoder = json.JSONDecoder()
    found: dict[int, list[object]] = {}
    position = 0
    while match := _RECORD_KEY.search(text, position):
        try:
            record, position = decoder.raw_decode(text, match.end())
        except (ValueError, RecursionError):
            position = match.end()
            continue
        found.setdefault(bisect.bisect_right(starts, match.start()), []).append(record)
    bounds = pairwise([*starts, len(text)])
    return [
        NotebookCell(_salvaged_id(text, start, end), None, found.get(index, []))
        for index, (start, end) in enumerate(bounds, start=1)
    ]


def _salvaged_id(text: str, start: int, end: int) -> str | None:
    """The cell's own id: it comes before the cell's metadata (which may hold other ids)."""
    metadata = text.find('"metadata"', start, end)
    match = _CELL_ID_KEY.search(text, start, metadata if metadata != -1 else end)
    return match.group(1) if match else None
