"""The system prompt: a short default, the person's AGENTS.md files, a few facts.

Rebuilt for every request so an edited AGENTS.md applies at once. It changes only when
those files, the folder or the date change, so provider prompt caches keep hitting.
"""

from __future__ import annotations

import os
import platform
import stat
import warnings
from datetime import date
from pathlib import Path

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.workspace import Workspace

DEFAULT = """\
You are elelem, a coding and data agent working inside a Jupyter notebook or a terminal.
Use the tools to look at the workspace, the notebook and the live Python namespace before
you answer; do not guess what a file or variable contains. Keep answers short and concrete.
When you change files, say what you changed. If a tool is not offered in the current mode,
say which mode would allow it instead of working around it."""

#: The default for a small window (`Session.small_window`): the same rules in fewer words.
BRIEF = """\
You are elelem, a coding and data agent in Jupyter or a terminal. Look with the tools
before you answer; never guess what a file or variable holds. Paths are relative to the
workspace root. Be short; say what you changed. If a tool is not in this mode, say which
mode has it."""

READ_LIMIT = 64_000
_warned: set[str] = set()


def _read(path: Path) -> str | None:
    """At most `READ_LIMIT` bytes of a regular file; None for anything else (a FIFO or a
    device is never read, so it cannot hang the turn or fill memory)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(os.path.realpath(path), flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _warn(path, "it is not a regular file")
            return None
        return f.read(READ_LIMIT).decode("utf-8", errors="replace")


def find_agents_md(start: Path) -> Path | None:
    """The nearest AGENTS.md at or above the workspace root `start`, if it may be read.

    It is sent to the provider on every request, so it gets the file tools' confinement:
    in the workspace it must resolve inside the workspace (a repository's symlink to
    `~/.ssh/id_ed25519` is not followed); above it, inside the folder holding it, and it
    must belong to the person or root (not planted in a shared folder such as /tmp). The
    nearest one decides: a refused one is not replaced by one further up.
    """
    start = Path(start).resolve()
    for folder in [start, *start.parents]:
        candidate = folder / "AGENTS.md"
        if not os.path.lexists(candidate):
            continue
        problem = _refusal(candidate, folder, above=folder != start)
        if problem:
            _warn(candidate, problem)
            return None
        return candidate
    return None


def _refusal(candidate: Path, folder: Path, above: bool) -> str | None:
    """Why `candidate` may not be read, or None."""

    try:
        real = Workspace(folder).resolve(candidate.name)
    except ToolError:
        where = "the folder above the workspace holding it" if above else "the workspace"
        return f"it leads outside {where} ({folder}) through a symlink"
    try:
        info = os.stat(real)
    except OSError as error:
        return f"it cannot be read ({error.strerror})"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if above and hasattr(os, "getuid") and info.st_uid not in (os.getuid(), 0):
        return "it belongs to another user"
    return None


def _warn(path: Path, problem: str) -> None:
    message = f"elelem: {path} is not used as instructions: {problem}"
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, stacklevel=3)


def build(
    workspace: Path, extra: str | None = None, home: Path | None = None, brief: bool = False
) -> str:
    """Assemble the system prompt for a session working in `workspace`; `brief`: the
    short default, for a small window."""
    parts = []
    if extra:
        parts.append(extra.strip())
    parts.append(BRIEF if brief else DEFAULT)
    home = home if home is not None else Path.home()
    for path in (home / ".agents" / "AGENTS.md", find_agents_md(workspace)):
        text = _read(path) if path else None
        if text and text.strip():
            parts.append(f"Instructions from {path}:\n\n{text.strip()}")
    parts.append(
        f"Environment: {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, working folder {workspace}, "
        f"current directory {os.getcwd()}, date {date.today().isoformat()}."
    )
    return "\n\n".join(parts)
