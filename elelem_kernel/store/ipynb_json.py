"""Notebook files as plain JSON, without importing nbformat: new cells and outputs, the
layout nbformat writes, and whether a file has a notebook's shape.

Importing nbformat imports jsonschema, and in a JupyterLab environment jsonschema's format
checkers compile rfc3987-syntax's grammars at import: 2-7 s. Restoring a conversation and
appending a turn (`ask --notebook`, the ACP session store) only read and write JSON, so
they do it here. Whether a file is a notebook is checked against `SHAPE` (what a notebook,
a cell and an output are, from nbformat's schema) by schema_check.py; only a file
that does not surely fit asks nbformat (and so jsonschema) for the verdict and its words.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from elelem_kernel.schema_check import Check, checker

NBFORMAT = 4
NBFORMAT_MINOR = 5
#: What restoring and appending rely on, as a JSON Schema: the parts of nbformat 4's schema
#: that say what a notebook, a cell and an output are (the rest of it, such as the
#: metadata's known keys, is nbformat's business and not checked here).
SHAPE: dict[str, object] = {
    "type": "object",
    "required": ["cells", "metadata", "nbformat", "nbformat_minor"],
    "properties": {
        "nbformat": {"enum": [NBFORMAT]},
        "nbformat_minor": {"type": "integer", "minimum": 0},
        "metadata": {"type": "object"},
        "cells": {"type": "array", "items": {"$ref": "#/$defs/cell"}},
    },
    "$defs": {
        "cell": {
            "type": "object",
            "required": ["cell_type", "metadata", "source"],
            "properties": {
                "id": {"type": "string", "pattern": "^[a-zA-Z0-9_-]+$", "maxLength": 64},
                "cell_type": {"enum": ["code", "markdown", "raw"]},
                "metadata": {"type": "object"},
                "source": {"$ref": "#/$defs/text"},
                "outputs": {"type": "array", "items": {"$ref": "#/$defs/output"}},
                "execution_count": {"type": ["integer", "null"]},
                "attachments": {"type": "object"},
            },
        },
        "output": {
            "type": "object",
            "required": ["output_type"],
            "properties": {
                "output_type": {"enum": ["execute_result", "display_data", "stream", "error"]},
                "metadata": {"type": "object"},
                "data": {"type": "object"},
                "text": {"$ref": "#/$defs/text"},
            },
        },
        "text": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
    },
}
#: Mimebundle entries nbformat writes as lists of lines, besides `text/*`.
_SPLIT_MIMES = ("application/javascript", "image/svg+xml")


def new_notebook(cells: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An empty v4.5 notebook, as `nbformat.v4.new_notebook()` makes it."""
    return {
        "cells": cells or [],
        "metadata": {},
        "nbformat": NBFORMAT,
        "nbformat_minor": NBFORMAT_MINOR,
    }


def new_code_cell(source: str, cell_id: str | None = None) -> dict[str, object]:
    """A code cell without outputs; its id random (8 hex digits, as nbformat's) if not given."""
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell_id or uuid.uuid4().hex[:8],
        "metadata": {},
        "outputs": [],
        "source": source,
    }


def unique_ids(notebook: Mapping[str, object]) -> None:
    """Give a later cell whose id an earlier cell has a new one, as nbformat repairs it
    (a notebook's cell ids are unique from v4.5 on)."""
    seen: set[str] = set()
    cells = notebook.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict):
            continue
        if cell.get("id") in seen:
            cell["id"] = uuid.uuid4().hex[:8]
        if isinstance(cell.get("id"), str):
            seen.add(cell["id"])


def display_data(data: Mapping[str, object], metadata: Mapping[str, object]) -> dict[str, object]:
    """A `display_data` output."""
    return {"data": data, "metadata": metadata, "output_type": "display_data"}


def source(cell: Mapping[str, object]) -> str:
    """A cell's source as one string (files hold it as a list of lines)."""
    text = cell.get("source", "")
    return "".join(p for p in text if isinstance(p, str)) if isinstance(text, list) else str(text)


def dumps(notebook: Mapping[str, object]) -> str:
    """`notebook` as `nbformat.writes` lays it out: sorted keys, one-space indents,
    multi-line text as lists of lines, transient metadata dropped."""
    nb = copy.deepcopy(dict(notebook))
    metadata, cells = nb.get("metadata"), nb.get("cells")
    for key in ("orig_nbformat", "orig_nbformat_minor", "signature"):
        if isinstance(metadata, dict):
            metadata.pop(key, None)
    for cell in cells if isinstance(cells, list) else []:
        cell.get("metadata", {}).pop("trusted", None)
        if isinstance(cell.get("source"), str):
            cell["source"] = cell["source"].splitlines(True)
        for attachment in (cell.get("attachments") or {}).values():
            _split_bundle(attachment)
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if output.get("output_type") in ("execute_result", "display_data"):
                _split_bundle(output.get("data", {}))
            elif output.get("output_type") == "stream" and isinstance(output.get("text"), str):
                output["text"] = output["text"].splitlines(True)
    return json.dumps(nb, sort_keys=True, indent=1, separators=(",", ": "), ensure_ascii=False)


def _split_bundle(data: dict[str, object]) -> None:
    for key, value in list(data.items()):
        if isinstance(value, str) and (key.startswith("text/") or key in _SPLIT_MIMES):
            data[key] = value.splitlines(True)


def write(notebook: Mapping[str, object], path: Path) -> None:
    """Write `notebook` to `path` as `nbformat.write` does (with a final newline)."""
    Path(path).write_text(dumps(notebook) + "\n", encoding="utf-8")


def read(path: Path) -> dict[str, Any]:
    """The notebook at `path` (a v4 one; an older one converted by nbformat); ValueError
    saying why when it is not one (not JSON, or not valid by nbformat's schema), OSError
    when it cannot be read."""
    text = Path(path).read_text(encoding="utf-8")
    notebook = json.loads(text)
    if isinstance(notebook, dict) and notebook.get("nbformat") != NBFORMAT:
        import nbformat  # an nbformat 3 notebook (rare): nbformat converts it

        return dict(json.loads(nbformat.writes(nbformat.reads(text, as_version=NBFORMAT))))
    if not isinstance(notebook, dict):
        raise ValueError("not a valid notebook: its top level is not an object")
    why = problem(notebook)
    if why:
        raise ValueError(f"not a valid notebook: {why}")
    return notebook


def problem(notebook: object) -> str | None:
    """Why `notebook` is not a notebook restore and append can work with, or None.

    `SHAPE` is checked first and imports nothing; a notebook that does not surely fit it
    asks nbformat (and so jsonschema), which decides and says where.
    """
    if _fits_shape()(notebook):
        return None
    import nbformat  # only for a notebook that does not fit: the verdict and its words

    try:
        error = next(nbformat.validator.iter_validate(notebook), None)
    except Exception as failure:
        return str(failure).splitlines()[0][:120] if str(failure) else type(failure).__name__
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    message = str(error.message).splitlines()[0][:100]
    return f"{where}: {message}" if where else message


@cache
def _fits_shape() -> Check:
    return checker(SHAPE)
