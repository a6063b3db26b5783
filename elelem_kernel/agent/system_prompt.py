"""The system prompt: a short default, the person's AGENTS.md files, a few facts.

Rebuilt for every request so an edited AGENTS.md applies at once. It changes only when
those files, the folder or the date change, so provider prompt caches keep hitting.
"""

from __future__ import annotations

import os
import platform
from datetime import date
from pathlib import Path

DEFAULT = """\
You are elelem, a coding and data agent working inside a Jupyter notebook or a terminal.
Use the tools to look at the workspace, the notebook and the live Python namespace before
you answer; do not guess what a file or variable contains. Keep answers short and concrete.
When you change files, say what you changed. If a tool is not offered in the current mode,
say which mode would allow it instead of working around it."""

READ_LIMIT = 64_000


def _read(path: Path) -> str | None:
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")[:READ_LIMIT]
    except OSError:
        return None
    return None


def find_agents_md(start: Path) -> Path | None:
    """The first AGENTS.md found walking up from `start`."""
    for folder in [start, *start.parents]:
        candidate = folder / "AGENTS.md"
        if candidate.is_file():
            return candidate
    return None


def build(workspace: Path, extra: str | None = None, home: Path | None = None) -> str:
    """Assemble the system prompt for a session working in `workspace`."""
    parts = []
    if extra:
        parts.append(extra.strip())
    parts.append(DEFAULT)
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
