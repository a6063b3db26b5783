"""What a turn changed, kept in its record with what is needed to revert it.

Each change is one entry of the record's `changes`: a file the turn wrote (`write`,
`edit`, `notebook_edit` on a file) with its text before (None when the turn created it),
or a cell of the open notebook the turn edited, inserted, deleted or moved, with its
source before and after. Texts are bounded (`MAX_TEXT` each, `MAX_TURN` a turn); a
change too large to keep says so in `too_large` and cannot be reverted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from elelem_kernel.tools.declaration import Result, ToolContext
from elelem_kernel.tools.workspace import Workspace

if TYPE_CHECKING:
    from elelem_kernel.tools.extras import Change, TurnExtras

MAX_TEXT = 64_000  #: characters of one before/after text kept
MAX_TURN = 256_000  #: characters of all the texts one turn keeps


def remember(extras: TurnExtras, change: Change) -> None:
    """Add `change` to the turn's `changes` (in `extras`, merged into the record)."""
    kept = extras.setdefault("changes", [])
    used = sum(_texts(c) + _outputs(c) for c in kept)
    entry = change.copy()
    if entry.get("kind") == "file" and "after" in entry:  # for /redo, only where it fits
        after = entry.get("after")
        if not isinstance(after, str) or len(after) > MAX_TEXT or used + _texts(entry) > MAX_TURN:
            entry.pop("after")
    size = _texts(entry)
    too_big = max(len(entry.get("before") or ""), len(entry.get("after") or "")) > MAX_TEXT
    if too_big or used + size > MAX_TURN:
        entry.pop("before", None)
        entry.pop("after", None)
        entry.pop("outputs", None)
        entry.pop("execution_count", None)
        entry["too_large"] = f"{size:,} characters: too large to keep for undo"
    elif "outputs" in entry and used + size + _outputs(entry) > MAX_TURN:
        entry.pop("outputs")  # the cell still goes back, its outputs cleared
        entry.pop("execution_count", None)
    kept.append(entry)


def _texts(change: Change) -> int:
    return len(change.get("before") or "") + len(change.get("after") or "")


def _outputs(change: Change) -> int:
    return outputs_size(change.get("outputs"))


def outputs_size(outputs: object) -> int:
    """How many characters a cell's `outputs` take as JSON (0 for none)."""
    return len(json.dumps(outputs, ensure_ascii=False, default=str)) if outputs else 0


class FileBefore(TypedDict, total=False):
    """What a file held before a turn wrote it (the `file` fields of a `Change`)."""

    before: str | None
    created: bool
    too_large: str


def file_before(path: Path) -> FileBefore:
    """What a file holds before the turn writes it: its text, or that it did not exist."""
    if not path.exists():
        return {"before": None, "created": True}
    try:
        if path.stat().st_size > MAX_TEXT * 4:
            return {"too_large": f"{path.stat().st_size:,} bytes: too large to keep for undo"}
        return {"before": path.read_bytes().decode("utf-8")}
    except (OSError, UnicodeDecodeError) as e:
        return {"too_large": f"not kept for undo: {e}"}


def digest(path: Path) -> str | None:
    """The SHA-256 of what a regular file holds now (None when it is not one), to tell at
    undo time whether it changed since the turn wrote it."""
    # hashlib (and OpenSSL) only once a tool changes a file: not on a turn's path
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


def kept(context: ToolContext, action: str, path: str, write: Callable[[], Result]) -> Result:
    """Run `write` on file `path`; when it succeeds, keep what the file held before in
    the turn's record, so the turn can be undone."""
    ws = Workspace(context.workspace)
    target = ws.resolve(path)
    before = file_before(target)
    result = write()
    if "error" not in result:
        entry: Change = {"kind": "file", "action": action, "path": ws.relative(target), **before}
        entry["after_sha"] = digest(target)
        if "too_large" not in entry:
            entry["after"] = file_before(target).get("before")  # what /redo writes again
        remember(context.turn_extras, entry)
    return result
