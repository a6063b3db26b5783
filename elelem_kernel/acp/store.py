"""ACP sessions kept as notebooks: one `.ipynb` per session in the sessions folder.

Each turn is appended as a cell with its frozen output and record, exactly as
`elelem-kernel ask --notebook` writes it (`cli.notebook.append_turn`), so `session/load`
restores the conversation in a new process, JupyterLab and `ask --notebook` open and
continue it, and a person can read what an editor session did. The notebook's metadata
`elelem_acp` keeps the session's working directory. Nothing is written for a session
until its first turn.

The folder is `$ELELEM_ACP_SESSIONS`, else `$XDG_DATA_HOME/elelem-kernel/acp-sessions`
(`~/.local/share/...` when XDG_DATA_HOME is unset).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from elelem_kernel.agent.restore import Rebuilt, rebuild
from elelem_kernel.cli.notebook import append_turn, new_notebook
from elelem_kernel.errors import ElelemError
from elelem_kernel.jupyter.notebook_file import read_notebook
from elelem_kernel.render.static import bundle
from elelem_kernel.store.data_folder import data_folder
from elelem_kernel.text import shorten

ENV = "ELELEM_ACP_SESSIONS"
METADATA = "elelem_acp"
#: What a session id may be: it names the session's file.
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def sessions_dir() -> Path:
    """The folder holding the sessions' notebooks (not created here)."""
    override = os.environ.get(ENV, "").strip()
    if override:
        return Path(override).expanduser()
    data = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "elelem-kernel" / "acp-sessions"


def path_of(session_id: str) -> Path:
    """The notebook of session `session_id`; ValueError for an id that cannot name a file."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise ValueError(
            f"invalid session id {session_id!r}: ids are letters, digits, '-' and '_' "
            "(64 at most), as session/new returns them"
        )
    return sessions_dir() / f"{session_id}.ipynb"


@dataclass
class Saved:
    """A session read back from its notebook."""

    session_id: str
    path: Path
    cwd: str | None
    rebuilt: Rebuilt
    warnings: list[str]

    @property
    def title(self) -> str:
        """The first prompt, on one line: how a person recognises the session."""
        for turns in self.rebuilt.conversations.values():
            for turn in turns:
                return shorten(" ".join(str(turn.get("prompt", "")).split()), 80)
        return ""


def load(session_id: str) -> Saved:
    """Read session `session_id`; ElelemError when it was never saved."""
    path = path_of(session_id)
    if not path.is_file():
        raise ElelemError(
            f"no saved session {session_id!r} in {path.parent} (a session is saved from "
            "its first prompt on; `elelem-kernel acp --list` shows them)"
        )
    cells, warnings = read_notebook(path)
    rebuilt = rebuild([(cell.id, cell.records) for cell in cells])
    return Saved(session_id, path, _cwd(path), rebuilt, warnings + rebuilt.warnings)


def save_turn(session_id: str, cwd: str, record: dict[str, Any]) -> Path:
    """Append the turn `record` to the session's notebook (created on the first turn)."""
    path = path_of(session_id)
    if not path.exists():
        import nbformat  # lazy: only a saving session needs it

        if not os.environ.get(ENV, "").strip():
            data_folder(create=True)  # 0700: a session holds a whole conversation
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        notebook = new_notebook()
        notebook.metadata[METADATA] = {"session": session_id, "cwd": cwd}
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:  # appended in place from now on
            nbformat.write(notebook, out)
    mtime = path.stat().st_mtime_ns
    append_turn(path, record, *bundle(record), expected_mtime_ns=mtime)
    return path


def listing() -> list[dict[str, Any]]:
    """Every saved session, newest first: id, cwd, title, turns, updated (ISO time), path."""
    folder = sessions_dir()
    found = []
    paths = sorted(folder.glob("*.ipynb"), key=_mtime, reverse=True) if folder.is_dir() else []
    for path in paths:
        if not SESSION_ID.fullmatch(path.stem):
            continue
        cells, _ = read_notebook(path)
        rebuilt = rebuild([(cell.id, cell.records) for cell in cells])
        saved = Saved(path.stem, path, _cwd(path), rebuilt, [])
        updated = datetime.fromtimestamp(_mtime(path), tz=timezone.utc)
        found.append(
            {
                "id": path.stem,
                "cwd": saved.cwd,
                "title": saved.title,
                "turns": rebuilt.turns,
                "updated": updated.isoformat(timespec="seconds"),
                "path": str(path),
            }
        )
    return found


def listing_text() -> str:
    """`elelem-kernel acp --list`: one line per session, or where they would be."""
    sessions = listing()
    if not sessions:
        return f"no ACP sessions saved yet in {sessions_dir()}"
    lines = [f"ACP sessions in {sessions_dir()}:"]
    for s in sessions:
        turns = f"{s['turns']} turn{'s' * (s['turns'] != 1)}"
        lines.append(f"{s['id']}  {s['updated']}  {turns}  {s['cwd'] or '?'}  {s['title']}")
    return "\n".join(lines)


def _cwd(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            metadata = json.load(f).get("metadata", {}).get(METADATA, {})
    except (OSError, ValueError, AttributeError):
        return None
    cwd = metadata.get("cwd") if isinstance(metadata, dict) else None
    return cwd if isinstance(cwd, str) else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
