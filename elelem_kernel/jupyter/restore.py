"""Restoring a conversation from the notebook, and `/load`.

After a kernel start, the fronts call `restore_into` on the first prompt; it finds the
notebook file (or takes the records the frontend sent); the store (store/notebook.py) reads
the turn records of its cells and rebuilds the conversations, which go to `Session.load`.
Restoring never runs anything.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.store import notebook

if TYPE_CHECKING:
    from elelem_kernel.agent.session import Session

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

_restored: weakref.WeakSet[Any] = weakref.WeakSet()


def find_notebook(
    user_ns: Mapping[str, object], env: Mapping[str, object]
) -> tuple[Path | None, str]:
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
        (user_ns.get(VSCODE_FILE), "VS Code"),
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


#: What VS Code sets in Python kernels, and the front in ours (from the cell id, read by
#: `jupyter/execute_request.py`).
VSCODE_FILE = "__vsc_ipynb_file__"


def start_folder() -> Path:
    """The folder the kernel started in: relative settings are relative to it."""
    from IPython import get_ipython

    started = getattr(get_ipython(), "starting_dir", None)
    return Path(started) if started else Path.cwd()


def restore_into(
    session: Session,
    user_ns: dict[str, Any],
    env: dict[str, Any],
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
            from elelem_kernel.jupyter import restore_ahead  # small: imported ahead (warm_up.py)

            restore_ahead.drop()  # a big notebook's cells are not kept twice
            cells, warnings = frontend.pop("cells"), frontend.pop("warnings", [])
            name = frontend.get("name") or "the open notebook"
            return load_cells(session, cells, name, warnings, cell=cell, source=source)
        if path is None:
            return how
        return _restore(session, path, cell=cell, source=source)
    except Exception as error:  # a broken restore must never break the prompt
        return f"warning: could not restore the conversation: {type(error).__name__}: {error}"


def register_commands(session: Session, user_ns: dict[str, Any], env: dict[str, Any]) -> None:
    """Add `/load [PATH]`: show or set the notebook file, and restore from it."""

    def load(session: Session, args: str) -> str:
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

    def complete(session: Session, args: str) -> list[str]:
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
        "show or set the notebook file the conversation is restored from, and restore it",
        load,
        complete,
        usage="/load [path/to/notebook.ipynb]",
    )


def _restore(session: Session, path: Path, *, cell: str | None, source: str | None) -> str | None:
    from elelem_kernel.jupyter import restore_ahead  # small: the kernel's start imported it

    ahead = restore_ahead.take(path)
    if ahead is None:
        cells, warnings = notebook.read_notebook(path)
        return load_cells(session, cells, path.name, warnings, cell=cell, source=source)
    cells, warnings, rebuilt = ahead
    return load_cells(
        session, cells, path.name, warnings, cell=cell, source=source, rebuilt=rebuilt
    )


def load_cells(
    session: Session,
    cells: list[notebook.NotebookCell],
    name: str,
    warnings: list[str],
    *,
    cell: str | None = None,
    source: str | None = None,
    rebuilt: notebook.Rebuilt | None = None,
) -> str | None:
    """Rebuild the conversations from `cells` into `session`: the one restore path, for the
    file and for the frontend's records alike; the restored line and warnings, or None.
    `rebuilt`: what the whole of `cells` rebuilds to, when it was rebuilt already."""
    if cell is None and source is not None:
        cells, rebuilt = _above(cells, source), None
    if rebuilt is None:
        rebuilt = notebook.restore_cells(cells, warnings)
    lines = []
    if rebuilt.turns:
        session.load(rebuilt.conversations, rebuilt.active)
        lines.append(notebook.restored_line(rebuilt.turns, len(rebuilt.conversations), name))
    lines += [f"warning: {text}" for text in rebuilt.warnings]
    return "\n\n".join(lines) or None


def _above(cells: list[notebook.NotebookCell], source: str) -> list[notebook.NotebookCell]:
    wanted = source.strip()
    for index, cell in enumerate(cells):
        if cell.source is not None and cell.source.strip() == wanted:
            return cells[:index]
    return cells
