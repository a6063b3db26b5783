"""`elelem-kernel ask --notebook NB "..."`: continue a notebook's conversation from the CLI.

The CLI writes the notebook file itself, through the store (store/notebook.py): it
restores the conversation from the file, runs one turn, and appends the turn as a cell with
its frozen output, never over a change made meanwhile.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from elelem_kernel.agent.front import PlainFront, TurnSettings
from elelem_kernel.agent.record import new_id
from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.errors import ElelemError
from elelem_kernel.events import EXIT_CODES
from elelem_kernel.render.static import bundle
from elelem_kernel.render.terminal_view import TerminalRenderer
from elelem_kernel.store import notebook
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
    mtime = notebook.modified_ns(path)
    problem = notebook.unwritable(path) if mtime is not None else None
    if problem:
        print(f"Error: {visible(problem)}", file=err)
        return 1
    rebuilt = notebook.restore(path) if mtime is not None else notebook.restore_cells([])
    if session is None:
        session = _session(path, session_options, err)
    if rebuilt.turns:
        session.load(rebuilt.conversations, rebuilt.active)
        print(notebook.restored_line(rebuilt.turns, len(rebuilt.conversations), path), file=err)
    for text in rebuilt.warnings:
        print(f"warning: {visible(text)}", file=err)
    if renderer is None:
        renderer = TerminalRenderer()
    result = session.run(prompt, renderer, cell=new_id())
    try:
        notebook.append_turn(path, result.record, *bundle(result.record), expected_mtime_ns=mtime)
    except ElelemError as error:
        print(f"Error: {visible(str(error))}", file=err)
        return 1
    print(f"elelem: added the turn to {path.name}", file=err)
    return EXIT_CODES.get(result.stop, 0)


def _session(path: Path, options: dict[str, Any], err: IO[str]) -> Session:

    if options.get("workspace") is None:
        options["workspace"] = path.parent
    front = PlainFront(TurnSettings(options.pop("approver", None)))
    session = new_session(front=front, **options)
    for notice in front.notices:
        print(f"elelem: {visible(notice)}", file=err)
    return session
