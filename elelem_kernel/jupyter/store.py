"""The notebook file as the conversation's store: find it, read the turn records, restore.

Each turn's frozen output carries its record in `metadata["elelem"]` (DESIGN.md,
"Conversation record"). After a kernel start, the fronts call `restore_into` on the first
prompt; it finds the notebook file, reads the records of its cells and hands them to
`Session.load`. Reading is forgiving (a damaged file still gives what can be read, with one
warning) and restoring never runs anything. `append_turn` and `ask_in_notebook` serve the
CLI (`elelem-kernel ask --notebook NB.ipynb "..."`), which writes the file itself.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import sys
import weakref
from itertools import pairwise
from pathlib import Path
from typing import IO, Any, NamedTuple

from elelem_kernel.agent.factory import new_session
from elelem_kernel.agent.record import new_id
from elelem_kernel.agent.restore import Cell, rebuild
from elelem_kernel.errors import ElelemError
from elelem_kernel.jupyter import append
from elelem_kernel.render.static import bundle
from elelem_kernel.render.terminal import TerminalRenderer
from elelem_kernel.visible import visible

#: `user_ns` key holding the notebook path set by `/load PATH`.
NOTEBOOK_KEY = "__elelem_notebook__"
#: `user_ns` key holding what the frontend sent over the `elelem.restore` comm: a dict with
#: `path` (the notebook as the frontend sees it, or None), `name`, and, until a restore uses
#: them, `cells` and `warnings` (see restore_comm.py).
FRONTEND_KEY = "__elelem_frontend__"
#: How to tell elelem which notebook it runs in, for messages.
HOW_TO_SET = (
    "set ELELEM_NOTEBOOK=path/to/notebook.ipynb or run `%elelem /load path/to/notebook.ipynb` "
    "(in the Elelem kernel: `/load path/to/notebook.ipynb`)"
)
#: Kernelspec name of the Elelem kernel, whose cells are bare prompts.
ELELEM_KERNEL = "elelem"

_restored: weakref.WeakSet[Any] = weakref.WeakSet()


class _Cell(NamedTuple):
    id: str | None
    source: str | None
    records: list[Any]


def find_notebook(user_ns: dict, env: dict) -> tuple[Path | None, str]:
    """The notebook file this kernel runs for, and how it was found (or how to set it).

    Order: `/load PATH` → `ELELEM_NOTEBOOK` → the frontend (the `elelem.restore` comm) →
    `JPY_SESSION_NAME` (jupyter_server) → `__vsc_ipynb_file__` (VS Code) → none.
    """
    frontend = user_ns.get(FRONTEND_KEY)
    candidates = [
        (user_ns.get(NOTEBOOK_KEY), "/load"),
        (env.get("ELELEM_NOTEBOOK"), "ELELEM_NOTEBOOK"),
        (frontend.get("path") if isinstance(frontend, dict) else None, "the frontend"),
        (env.get("JPY_SESSION_NAME") or user_ns.get("__session__"), "JPY_SESSION_NAME"),
        (user_ns.get("__vsc_ipynb_file__"), "VS Code"),
    ]
    for value, source in candidates:
        if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
            continue
        path = Path(value).expanduser()
        if source in ("JPY_SESSION_NAME", "VS Code") and path.suffix != ".ipynb":
            continue
        if not path.is_absolute():  # a cell may have changed directory since start-up
            path = start_folder() / path
        return path, f"from {source}"
    return None, f"no notebook file known, so no conversation to restore: {HOW_TO_SET}"


def start_folder() -> Path:
    """The folder the kernel started in: relative settings are relative to it."""
    from IPython import get_ipython

    started = getattr(get_ipython(), "starting_dir", None)
    return Path(started) if started else Path.cwd()


def read_cells(path: Path) -> tuple[list[Cell], list[str]]:
    """Each cell's id and record candidates, in order, plus warnings; never raises."""
    cells, warnings = _read(Path(path))
    return [(cell.id, cell.records) for cell in cells], warnings


def restore_into(
    session: Any,
    user_ns: dict,
    env: dict,
    *,
    cell: str | None = None,
    source: str | None = None,
    force: bool = False,
) -> str | None:
    """Restore the notebook's conversations into `session`; what to show, or None.

    The answer is a line like "restored 12 turns from analysis.ipynb" and one paragraph
    per warning (lines separated by blank lines, so it reads as Markdown and as text).

    Runs once per session unless `force`. `cell` and `source` describe the cell about to
    run: without a cell id (nbclient, `jupyter execute`), a cell whose source matches is
    being re-run from the top, so only the turns above it are restored. Never raises.
    """
    try:
        if not force:
            if session in _restored:
                return None
            _restored.add(session)
        path, how = find_notebook(user_ns, env)
        frontend = user_ns.get(FRONTEND_KEY)
        if how != "from /load" and isinstance(frontend, dict) and "cells" in frontend:
            cells, warnings = frontend.pop("cells"), frontend.pop("warnings", [])
            name = frontend.get("name") or "the open notebook"
            return restore_cells(session, cells, name, warnings, cell=cell, source=source)
        if path is None:
            return how
        return _restore(session, path, cell=cell, source=source)
    except Exception as error:  # a broken restore must never break the prompt
        return f"warning: could not restore the conversation: {type(error).__name__}: {error}"


def register_commands(session: Any, user_ns: dict, env: dict) -> None:
    """Add `/load [PATH]`: show or set the notebook file, and restore from it."""

    def load(session: Any, args: str) -> str:
        text = args.strip().strip("'\"")
        if not text and "cells" in (user_ns.get(FRONTEND_KEY) or {}):
            line = restore_into(session, user_ns, env, force=True)
            return line or "nothing to restore from the open notebook"
        if not text:
            path, how = find_notebook(user_ns, env)
            return f"notebook: `{path}` ({how})" if path else how
        path = Path(text).expanduser().absolute()
        if path.suffix != ".ipynb":
            return f"`{text}` is not a notebook (.ipynb) file"
        user_ns[NOTEBOOK_KEY] = str(path)
        line = restore_into(session, user_ns, env, force=True)
        return line or f"nothing to restore from {path.name}"

    def complete(session: Any, args: str) -> list[str]:
        folder, _, start = args.rpartition("/")
        base = Path(folder or ".").expanduser()
        try:
            names = sorted(p.name for p in base.iterdir() if p.suffix == ".ipynb" or p.is_dir())
        except OSError:
            return []
        prefix = f"{folder}/" if folder else ""
        return [prefix + name for name in names if name.startswith(start)]

    session.commands.add(
        "load",
        "Show or set the notebook file the conversation is restored from, and restore it",
        load,
        complete,
        usage="/load [path/to/notebook.ipynb]",
    )


def _restore(session: Any, path: Path, *, cell: str | None, source: str | None) -> str | None:
    cells, warnings = _read(path)
    return restore_cells(session, cells, path.name, warnings, cell=cell, source=source)


def cells_of(notebook: Any, name: str) -> tuple[list[_Cell], list[str]]:
    """The cells of a notebook's JSON (as read from a file or sent by the frontend) and
    warnings; never raises. Each cell needs only `id` and `outputs[].metadata.elelem`."""
    cells, problem = _walk(notebook)
    return cells, [f"{name} {problem}; nothing restored"] if problem else []


def restore_cells(
    session: Any,
    cells: list[_Cell],
    name: str,
    warnings: list[str],
    *,
    cell: str | None = None,
    source: str | None = None,
) -> str | None:
    """Rebuild the conversations from `cells` into `session`: the one restore path, for the
    file and for the frontend's records alike; the restored line and warnings, or None."""
    if cell is None and source is not None:
        cells = _above(cells, source)
    rebuilt = rebuild([(c.id, c.records) for c in cells])
    lines = []
    if rebuilt.turns:
        session.load(rebuilt.conversations, rebuilt.active)
        lines.append(_restored_line(rebuilt.turns, len(rebuilt.conversations), name))
    lines += [f"warning: {text}" for text in warnings + rebuilt.warnings]
    return "\n\n".join(lines) or None


def _restored_line(turns: int, conversations: int, name: str | Path) -> str:
    name = name.name if isinstance(name, Path) else name
    line = f"restored {turns} turn{'s' * (turns != 1)} from {name}"
    if conversations > 1:
        line += f" ({conversations} conversations)"
    return line


def _above(cells: list[_Cell], source: str) -> list[_Cell]:
    wanted = source.strip()
    for index, cell in enumerate(cells):
        if cell.source is not None and cell.source.strip() == wanted:
            return cells[:index]
    return cells


def _read(path: Path) -> tuple[list[_Cell], list[str]]:
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
    problem = _nbformat_problem(notebook)
    if problem:
        return cells, [
            f"{path.name} is not a valid notebook ({problem}); restored what could be read"
        ]
    return cells, []


def _walk(notebook: Any) -> tuple[list[_Cell], str | None]:
    if not isinstance(notebook, dict):
        return [], f"is not a notebook (its top level is a JSON {type(notebook).__name__})"
    raw_cells = _raw_cells(notebook)
    if not isinstance(raw_cells, list):
        return [], "has no list of cells"
    return [
        _cell(raw) if isinstance(raw, dict) else _Cell(None, None, []) for raw in raw_cells
    ], None


def _raw_cells(notebook: dict) -> Any:
    if "cells" in notebook or not isinstance(notebook.get("worksheets"), list):
        return notebook.get("cells")
    sheets = [s for s in notebook["worksheets"] if isinstance(s, dict)]  # nbformat 3
    return [c for s in sheets if isinstance(s.get("cells"), list) for c in s["cells"]]


def _cell(raw: dict) -> _Cell:
    cell_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    source = raw.get("source") if raw.get("source") is not None else raw.get("input")
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    records = []
    outputs = raw.get("outputs")
    for output in outputs if isinstance(outputs, list) else []:
        metadata = output.get("metadata") if isinstance(output, dict) else None
        if isinstance(metadata, dict) and "elelem" in metadata:
            records.append(metadata["elelem"])
    return _Cell(cell_id, source if isinstance(source, str) else None, records)


def _nbformat_problem(notebook: dict) -> str | None:
    import nbformat

    try:
        error = next(nbformat.validator.iter_validate(notebook), None)
    except Exception as failure:
        return str(failure).splitlines()[0][:120] if str(failure) else type(failure).__name__
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    message = str(error.message).splitlines()[0][:100]
    return f"{where}: {message}" if where else message


_CELL_START = re.compile(r'"cell_type"\s*:')
_CELL_ID_KEY = re.compile(r'"id"\s*:\s*"([a-zA-Z0-9_-]{1,64})"')
_RECORD_KEY = re.compile(r'"elelem"\s*:\s*')


def _salvage(text: str) -> list[_Cell]:
    """Cells and the records that still parse in a damaged file (nbformat's key order)."""
    starts = [match.start() for match in _CELL_START.finditer(text)]
    decoder = json.JSONDecoder()
    found: dict[int, list[Any]] = {}
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
        _Cell(_salvaged_id(text, start, end), None, found.get(index, []))
        for index, (start, end) in enumerate(bounds, start=1)
    ]


def _salvaged_id(text: str, start: int, end: int) -> str | None:
    """The cell's own id: it comes before the cell's metadata (which may hold other ids)."""
    metadata = text.find('"metadata"', start, end)
    match = _CELL_ID_KEY.search(text, start, metadata if metadata != -1 else end)
    return match.group(1) if match else None


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


def ask_in_notebook(
    path: Path,
    prompt: str,
    *,
    session: Any = None,
    renderer: Any = None,
    err: IO[str] | None = None,
    **session_options: Any,
) -> int:
    """`elelem-kernel ask --notebook NB "..."`: continue NB's conversation, append the turn.

    Restores from the file, runs one turn with the terminal renderer (or `renderer`) on
    `session` (default: `new_session(**session_options)`, workspace = the notebook's
    folder) and appends the turn as a cell. Returns the exit code: 0 done, 1 error (the
    turn failed, or the file could not be read or changed meanwhile), 130 interrupted.
    """

    err = err or sys.stderr
    path = Path(path).expanduser().absolute()
    mtime = _mtime(path)
    problem = _unwritable(path) if mtime is not None else None
    if problem:
        print(f"Error: {visible(problem)}", file=err)
        return 1
    cells, warnings = _read(path) if mtime is not None else ([], [])
    rebuilt = rebuild([(cell.id, cell.records) for cell in cells])
    if session is None:
        session = _session(path, session_options, err)
    if rebuilt.turns:
        session.load(rebuilt.conversations, rebuilt.active)
        print(_restored_line(rebuilt.turns, len(rebuilt.conversations), path), file=err)
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
    if result.stop == "interrupted":
        return 130
    return 1 if result.stop == "error" else 0


def _session(path: Path, options: dict[str, Any], err: IO[str]) -> Any:

    if options.get("workspace") is None:
        options["workspace"] = path.parent
    session = new_session(**options)
    if session.notice:
        print(f"elelem: {visible(session.notice)}", file=err)
    return session


def _unwritable(path: Path) -> str | None:
    """Why the turn could not be appended to the existing file at `path`, before asking."""
    import nbformat

    try:
        nbformat.read(path, as_version=4)
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
    record: dict,
    data: dict,
    metadata: dict,
    *,
    expected_mtime_ns: int | None,
) -> None:
    """Append the turn as a cell with its frozen output to the notebook at `path`.

    `expected_mtime_ns` is the file's mtime when it was read (None: it did not exist);
    if the file changed since, nothing is written and ElelemError says so. The new cell
    is `%%elelem` + prompt in Python notebooks, the bare prompt in Elelem-kernel notebooks.
    """
    import nbformat

    path = Path(path)
    _check_unchanged(path, expected_mtime_ns)
    elelem = append.elelem_if_unchanged(path, expected_mtime_ns)
    if elelem is not None and append.append(path, _turn_cell(record, data, metadata, elelem)):
        return  # as this process last wrote it: the cell goes in place, not a rewrite
    if expected_mtime_ns is None:
        notebook = _new_notebook()
    else:
        try:
            notebook = nbformat.read(path, as_version=4)
        except Exception as error:
            raise ElelemError(
                f"cannot add the turn to {path}: it is not a notebook nbformat can read "
                f"({type(error).__name__}: {_first_line(error)}); nothing was written"
            ) from error
    elelem = _is_elelem(notebook)
    if not elelem and not any("load_ext elelem_kernel" in c.source for c in notebook.cells):
        notebook.cells.append(nbformat.v4.new_code_cell("%load_ext elelem_kernel"))
    notebook.cells.append(_turn_cell(record, data, metadata, elelem))
    _write(path, notebook, expected_mtime_ns)
    append.remember(path, notebook, elelem)


def _turn_cell(record: dict, data: dict, metadata: dict, elelem: bool) -> Any:
    """The turn's cell: its prompt (after `%%elelem` in Python notebooks), its frozen output."""
    import nbformat

    prompt = str(record.get("prompt", ""))
    cell = nbformat.v4.new_code_cell(prompt if elelem else f"%%elelem\n{prompt}")
    if isinstance(record.get("cell"), str) and _CELL_ID.fullmatch(record["cell"]):
        cell.id = record["cell"]
    output_metadata = {**metadata, "elelem": metadata.get("elelem", record)}
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=output_metadata)]
    return cell


_CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _new_notebook() -> Any:
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": ELELEM_KERNEL,
        "display_name": "Elelem",
        "language": "elelem",
    }
    notebook.metadata["language_info"] = {"name": "elelem"}
    return notebook


def _is_elelem(notebook: Any) -> bool:
    metadata = notebook.get("metadata", {})
    kernelspec = metadata.get("kernelspec") or {}
    language = metadata.get("language_info") or {}
    return ELELEM_KERNEL in (kernelspec.get("name"), language.get("name"))


def _check_unchanged(path: Path, expected_mtime_ns: int | None) -> None:
    if _mtime(path) != expected_mtime_ns:
        raise ElelemError(
            f"{path} changed while the turn ran, so the turn was not added to it "
            "(writing would lose the other change); save or close it elsewhere and ask again"
        )


def _write(path: Path, notebook: Any, expected_mtime_ns: int | None) -> None:
    import nbformat

    temporary = path.with_name(f".{path.name}.elelem-{os.getpid()}.tmp")
    try:
        nbformat.write(notebook, temporary)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        _check_unchanged(path, expected_mtime_ns)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__
