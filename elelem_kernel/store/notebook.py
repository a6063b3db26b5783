"""The notebook as the store, the one interface the fronts use: restore the conversations a
notebook holds, and append a turn to it as a cell with its frozen output.

`ask --notebook` (cli/ask_notebook.py), the ACP sessions (store/acp_sessions.py) and the
Jupyter restore (jupyter/restore.py, from the file or from the cells the open notebook
sent) all go through here, so a notebook any of them wrote restores in the others. Reading
never raises and never runs anything (store/ipynb_records.py); which records count is
store/rebuild.py's rule. Appending writes the cell in place when it can
(store/in_place.py), never over a change made meanwhile, and never imports nbformat
(store/ipynb_json.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from elelem_kernel.errors import ElelemError
from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME, RECORD_KEY
from elelem_kernel.store import in_place, ipynb_json
from elelem_kernel.store.ipynb_records import NotebookCell, cells_of, read_notebook
from elelem_kernel.store.rebuild import Rebuilt, rebuild
from elelem_kernel.store.record_format import TurnRecord

__all__ = [
    "NotebookCell",
    "Rebuilt",
    "append_turn",
    "cells_of",
    "modified_ns",
    "new_notebook",
    "read_notebook",
    "restore",
    "restore_cells",
    "restored_line",
    "unwritable",
]


def restore(path: Path) -> Rebuilt:
    """The conversations kept in the notebook file at `path`, the file's warnings first."""
    cells, warnings = read_notebook(Path(path))
    return restore_cells(cells, warnings)


def restore_cells(cells: Sequence[NotebookCell], warnings: Sequence[str] = ()) -> Rebuilt:
    """The conversations kept in `cells` (read from a file, or sent by the frontend), with
    `warnings` (what reading them said) before the rebuild's own."""
    rebuilt = rebuild([(cell.id, cell.records) for cell in cells])
    rebuilt.warnings[:0] = warnings
    return rebuilt


def restored_line(turns: int, conversations: int, name: str | Path) -> str:
    """ "restored 12 turns from NB.ipynb (2 conversations)": what a restore shows."""
    name = name.name if isinstance(name, Path) else name
    line = f"restored {turns} turn{'s' * (turns != 1)} from {name}"
    if conversations > 1:
        line += f" ({conversations} conversations)"
    return line


def modified_ns(path: Path) -> int | None:
    """The file's mtime in ns, to hand to `append_turn`; None when there is no file."""
    try:
        return Path(path).stat().st_mtime_ns
    except FileNotFoundError:
        return None


def unwritable(path: Path) -> str | None:
    """Why a turn could not be appended to the existing file at `path`, before running it."""
    try:
        ipynb_json.read(path)
    except Exception as error:
        return (
            f"cannot continue {path}: it is not a notebook nbformat can read "
            f"({type(error).__name__}: {_first_line(error)})"
        )
    if not os.access(path, os.W_OK) or not os.access(Path(path).parent, os.W_OK):
        return f"cannot continue {path}: the file or its folder is not writable"
    return None


def append_turn(
    path: Path,
    record: TurnRecord,
    data: Mapping[str, object],
    metadata: Mapping[str, object],
    *,
    expected_mtime_ns: int | None,
) -> None:
    """Append the turn as a cell with its frozen output (`data`, `metadata`: the turn's
    mimebundle and output metadata, render.static.bundle) to the notebook at `path`.

    `expected_mtime_ns` is the file's mtime when it was read (None: it did not exist);
    if the file changed since, nothing is written and ElelemError says so. The new cell
    is `%%elelem` + prompt in Python notebooks, the bare prompt in Elelem-kernel notebooks.
    """
    path = Path(path)
    _check_unchanged(path, expected_mtime_ns)
    elelem = in_place.elelem_if_unchanged(path, expected_mtime_ns)
    if elelem is not None and in_place.append(path, _turn_cell(record, data, metadata, elelem)):
        return  # as this process last wrote it: the cell goes in place, not a rewrite
    if expected_mtime_ns is None:
        notebook = new_notebook()
    else:
        try:
            notebook = ipynb_json.read(path)
        except Exception as error:
            raise ElelemError(
                f"cannot add the turn to {path}: it is not a notebook nbformat can read "
                f"({type(error).__name__}: {_first_line(error)}); nothing was written"
            ) from error
    elelem = _is_elelem(notebook)
    cells = notebook["cells"]
    if not elelem and not any("load_ext elelem_kernel" in ipynb_json.source(c) for c in cells):
        cells.append(ipynb_json.new_code_cell("%load_ext elelem_kernel"))
    cells.append(_turn_cell(record, data, metadata, elelem))
    ipynb_json.unique_ids(notebook)  # a cell id taken already: the new cell gets another
    _write(path, notebook, expected_mtime_ns)
    in_place.remember(path, notebook, elelem)


def _turn_cell(
    record: TurnRecord, data: Mapping[str, object], metadata: Mapping[str, object], elelem: bool
) -> dict[str, object]:
    """The turn's cell: its prompt (after `%%elelem` in Python notebooks), its frozen output."""
    prompt = str(record.get("prompt", ""))
    cell_id = record.get("cell")
    cell = ipynb_json.new_code_cell(
        prompt if elelem else f"%%elelem\n{prompt}",
        cell_id if isinstance(cell_id, str) and _CELL_ID.fullmatch(cell_id) else None,
    )
    output_metadata = {**metadata, RECORD_KEY: metadata.get(RECORD_KEY, record)}
    cell["outputs"] = [ipynb_json.display_data(data, output_metadata)]
    return cell


_CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def new_notebook() -> dict[str, Any]:
    """An empty notebook of the Elelem kernel."""
    notebook = ipynb_json.new_notebook()
    notebook["metadata"]["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": KERNEL_DISPLAY_NAME,
        "language": KERNEL_NAME,
    }
    notebook["metadata"]["language_info"] = {"name": KERNEL_NAME}
    return notebook


def _is_elelem(notebook: Mapping[str, object]) -> bool:
    metadata = notebook.get("metadata")
    names = []
    for key in ("kernelspec", "language_info"):
        found = metadata.get(key) if isinstance(metadata, dict) else None
        names.append(found.get("name") if isinstance(found, dict) else None)
    return KERNEL_NAME in names


def _check_unchanged(path: Path, expected_mtime_ns: int | None) -> None:
    if modified_ns(path) != expected_mtime_ns:
        raise ElelemError(
            f"{path} changed while the turn ran, so the turn was not added to it "
            "(writing would lose the other change); save or close it elsewhere and ask again"
        )


def _write(path: Path, notebook: Mapping[str, object], expected_mtime_ns: int | None) -> None:
    temporary = path.with_name(f".{path.name}.elelem-{os.getpid()}.tmp")
    try:
        ipynb_json.write(notebook, temporary)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        _check_unchanged(path, expected_mtime_ns)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__
