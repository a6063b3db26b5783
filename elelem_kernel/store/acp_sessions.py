"""ACP sessions kept as notebooks: one `.ipynb` per session in the sessions folder.

Each turn is appended as a cell with its frozen output and record, exactly as
`elelem-kernel ask --notebook` writes it (`store.notebook.append_turn`), so `session/load`
restores the conversation in a new process, JupyterLab and `ask --notebook` open and
continue it, and a person can read what an editor session did. The notebook's metadata
`elelem_acp` keeps the session's working directory and mode. A session is written at
`session/new`, before its first turn, so another process can load and prompt it.

Sessions hold whole conversations and file contents: the folder is made 0700 and each
notebook 0600, as the MCP logs and cache are.

The folder is `$ELELEM_ACP_SESSIONS`, else `$XDG_DATA_HOME/elelem-kernel/acp-sessions`
(`~/.local/share/...` when XDG_DATA_HOME is unset).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TypedDict

from elelem_kernel.errors import ElelemError
from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME
from elelem_kernel.store.notebook import Rebuilt, append_turn, restore
from elelem_kernel.store.record_format import TurnRecord
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


class SavedSession(TypedDict):
    """One saved session as `listing` lists it (`session/list` answers with these)."""

    id: str
    cwd: str | None
    title: str
    turns: int
    updated: str  #: ISO time of its notebook's last change
    path: str


@dataclass
class Saved:
    """A session read back from its notebook."""

    session_id: str
    path: Path
    cwd: str | None
    rebuilt: Rebuilt
    warnings: list[str]
    mode: str | None = None

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
            "session/new on; `elelem-kernel acp --list` shows them)"
        )
    rebuilt = restore(path)
    mode = _metadata(path).get("mode")
    return Saved(
        session_id,
        path,
        _cwd(path),
        rebuilt,
        rebuilt.warnings,
        mode if isinstance(mode, str) else None,
    )


def create(session_id: str, cwd: str, mode: str) -> Path:
    """Write the notebook of a new session (no turns yet), private to this person.

    Written as JSON, without nbformat: importing it (and jsonschema) would hold up the
    answer to `session/new`, and an empty notebook needs no validation."""
    path = path_of(session_id)
    _private_folder(path.parent)
    kernel = {"name": KERNEL_NAME, "display_name": KERNEL_DISPLAY_NAME, "language": KERNEL_NAME}
    metadata = {
        "kernelspec": kernel,
        "language_info": {"name": KERNEL_NAME},
        METADATA: {"session": session_id, "cwd": cwd, "mode": mode},
    }
    notebook = {"cells": [], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    _write_private(path, notebook)
    return path


def save_turn(
    session_id: str,
    cwd: str,
    record: TurnRecord,
    data: Mapping[str, object],
    metadata: Mapping[str, object],
    mode: str | None = None,
) -> Path:
    """Append the turn `record` with its frozen output (`data`, `metadata`: the front's
    render.static.bundle of it) to the session's notebook, noting the session's mode."""
    path = path_of(session_id)
    if not path.exists():
        create(session_id, cwd, mode or "build")
    elif mode is not None:
        remember_mode(session_id, mode)
    mtime = path.stat().st_mtime_ns
    append_turn(path, record, data, metadata, expected_mtime_ns=mtime)
    os.chmod(path, 0o600)
    return path


def remember_mode(session_id: str, mode: str) -> None:
    """Note the session's mode in its notebook, for `session/load` (when it changed)."""
    path = path_of(session_id)
    try:
        with open(path, encoding="utf-8") as f:
            notebook = json.load(f)
        kept = notebook["metadata"][METADATA]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if not isinstance(kept, dict) or kept.get("mode") == mode:
        return
    kept["mode"] = mode
    _write_private(path, notebook)


def _write_private(path: Path, notebook: Mapping[str, object]) -> None:
    """Write `notebook` as `path`, mode 0600, replacing it whole (never half written)."""
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(notebook, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(partial, path)


def _private_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)


def listing() -> list[SavedSession]:
    """Every saved session, newest first: id, cwd, title, turns, updated (ISO time), path."""
    folder = sessions_dir()
    found: list[SavedSession] = []
    paths = sorted(folder.glob("*.ipynb"), key=_mtime, reverse=True) if folder.is_dir() else []
    for path in paths:
        if not SESSION_ID.fullmatch(path.stem):
            continue
        rebuilt = restore(path)
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


def _metadata(path: Path) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as f:
            metadata = json.load(f).get("metadata", {}).get(METADATA, {})
    except (OSError, ValueError, AttributeError):
        return {}
    return metadata if isinstance(metadata, dict) else {}


def _cwd(path: Path) -> str | None:
    cwd = _metadata(path).get("cwd")
    return cwd if isinstance(cwd, str) else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
