"""`elelem-kernel ask --notebook NB "..."`: continue a notebook's conversation from the CLI.

The CLI writes the notebook file itself: it restores the conversation from the file, runs
one turn, and appends the turn as a cell with its frozen output (`append_turn`), in place
when it can (`jupyter/append.py`), never over a change made meanwhile.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from elelem_kernel.agent.record import TurnRecord, new_id
from elelem_kernel.agent.restore import rebuild
from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.errors import ElelemError
from elelem_kernel.events import EXIT_CODES
from elelem_kernel.jupyter import append, notebook_json
from elelem_kernel.jupyter.notebook_file import read_notebook
from elelem_kernel.jupyter.restore import restored_line
from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME, RECORD_KEY
from elelem_kernel.render.static import bundle
from elelem_kernel.render.terminal import TerminalRenderer
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.agent.session import Session


def ask_in_notebook(
    path: Path,
    prompt: str,
    *,
    session: Session | None = None,
    renderer: Any = None,
    err: IO[str] | None = None,
    **session_options: Any,
) -> int:
    """`elelem-kernel ask --notebook NB "..."`: continue NB's conversation, append the turn.

    Restores from the file, runs one turn with the terminal renderer (or `renderer`) on
    `session` (default: `new_session(**session_options)`, workspace = the notebook's
    folder) and appends the turn as a cell. Returns the exit code: 0 done, 1 error (the
    turn failed, or the file could not be read or changed meanwhile), 3 stopped by its
    budget, 130 interrupted.
    """

    err = err or sys.stderr
    path = Path(path).expanduser().absolute()
    mtime = _mtime(path)
    problem = _unwritable(path) if mtime is not None else None
    if problem:
        print(f"Error: {visible(problem)}", file=err)
        return 1
    cells, warnings = read_notebook(path) if mtime is not None else ([], [])
    rebuilt = rebuild([(cell.id, cell.records) for cell in cells])
    if session is None:
        session = _session(path, session_options, err)
    if rebuilt.turns:
        session.load(rebuilt.conversations, rebuilt.active)
        print(restored_line(rebuilt.turns, len(rebuilt.conversations), path), file=err)
    for text in warnings + rebuilt.warnings:
        print(f"warning: {visible(text)}", file=err)
    if renderer is None:
        renderer = TerminalRenderer()
    result = session.run(prompt, renderer, cell=new_id())
    try:
        append_turn(path, result.record, *bundle(result.record), expected_mtime_ns=mtime)
    except ElelemError as error:
        print(f"Error: {visible(str(error))}", file=err)
        return 1
    print(f"elelem: added the turn to {path.name}", file=err)
    return EXIT_CODES.get(result.stop, 0)


def _session(path: Path, options: dict[str, Any], err: IO[str]) -> Any:

    if options.get("workspace") is None:
        options["workspace"] = path.parent
    session = new_session(**options)
    if session.notice:
        print(f"elelem: {visible(session.notice)}", file=err)
    return session


def _unwritable(path: Path) -> str | None:
    """Why the turn could not be appended to the existing file at `path`, before asking."""
    try:
        notebook_json.read(path)
    except Exception as error:
        return (
            f"cannot continue {path}: it is not a notebook nbformat can read "
            f"({type(error).__name__}: {_first_line(error)})"
        )
    if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        return f"cannot continue {path}: the file or its folder is not writable"
    return None


def append_turn(
    path: Path,
    record: TurnRecord,
    data: dict[str, Any],
    metadata: dict[str, Any],
    *,
    expected_mtime_ns: int | None,
) -> None:
    """Append the turn as a cell with its frozen output to the notebook at `path`.

    `expected_mtime_ns` is the file's mtime when it was read (None: it did not exist);
    if the file changed since, nothing is written and ElelemError says so. The new cell
    is `%%elelem` + prompt in Python notebooks, the bare prompt in Elelem-kernel notebooks.
    """
    path = Path(path)
    _check_unchanged(path, expected_mtime_ns)
    elelem = append.elelem_if_unchanged(path, expected_mtime_ns)
    if elelem is not None and append.append(path, _turn_cell(record, data, metadata, elelem)):
        return  # as this process last wrote it: the cell goes in place, not a rewrite
    if expected_mtime_ns is None:
        notebook = new_notebook()
    else:
        try:
            notebook = notebook_json.read(path)
        except Exception as error:
            raise ElelemError(
                f"cannot add the turn to {path}: it is not a notebook nbformat can read "
                f"({type(error).__name__}: {_first_line(error)}); nothing was written"
            ) from error
    elelem = _is_elelem(notebook)
    cells = notebook["cells"]
    if not elelem and not any("load_ext elelem_kernel" in notebook_json.source(c) for c in cells):
        cells.append(notebook_json.new_code_cell("%load_ext elelem_kernel"))
    cells.append(_turn_cell(record, data, metadata, elelem))
    notebook_json.unique_ids(notebook)  # a cell id taken already: the new cell gets another
    _write(path, notebook, expected_mtime_ns)
    append.remember(path, notebook, elelem)


def _turn_cell(
    record: TurnRecord, data: dict[str, Any], metadata: dict[str, Any], elelem: bool
) -> dict[str, Any]:
    """The turn's cell: its prompt (after `%%elelem` in Python notebooks), its frozen output."""
    prompt = str(record.get("prompt", ""))
    cell_id = record.get("cell")
    cell = notebook_json.new_code_cell(
        prompt if elelem else f"%%elelem\n{prompt}",
        cell_id if isinstance(cell_id, str) and _CELL_ID.fullmatch(cell_id) else None,
    )
    output_metadata = {**metadata, RECORD_KEY: metadata.get(RECORD_KEY, record)}
    cell["outputs"] = [notebook_json.display_data(data, output_metadata)]
    return cell


_CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def new_notebook() -> dict[str, Any]:
    """An empty notebook of the Elelem kernel."""
    notebook = notebook_json.new_notebook()
    notebook["metadata"]["kernelspec"] = {
        "name": KERNEL_NAME,
        "display_name": KERNEL_DISPLAY_NAME,
        "language": KERNEL_NAME,
    }
    notebook["metadata"]["language_info"] = {"name": KERNEL_NAME}
    return notebook


def _is_elelem(notebook: Any) -> bool:
    metadata = notebook.get("metadata", {})
    kernelspec = metadata.get("kernelspec") or {}
    language = metadata.get("language_info") or {}
    return KERNEL_NAME in (kernelspec.get("name"), language.get("name"))


def _check_unchanged(path: Path, expected_mtime_ns: int | None) -> None:
    if _mtime(path) != expected_mtime_ns:
        raise ElelemError(
            f"{path} changed while the turn ran, so the turn was not added to it "
            "(writing would lose the other change); save or close it elsewhere and ask again"
        )


def _write(path: Path, notebook: dict[str, Any], expected_mtime_ns: int | None) -> None:
    temporary = path.with_name(f".{path.name}.elelem-{os.getpid()}.tmp")
    try:
        notebook_json.write(notebook, temporary)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        _check_unchanged(path, expected_mtime_ns)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
