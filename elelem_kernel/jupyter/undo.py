"""`/undo`: revert the last turn that changed something and is not undone yet; `/redo`:
apply it again.

The turn's record keeps what it changed (`changes`, tools/changes.py). Files go back to
their text before the turn (a file the turn created is removed), open-notebook cells go
back through the frontend (the `revert` request of the `elelem.notebook` comm), each only
where it is unchanged since the turn; anything changed since, too large to have been
kept, or out of reach is listed and left alone. The turn stays in the notebook, its record
marked `undone` (in the notebook too, through the frontend, so a restored conversation
knows), and is no longer sent to the model. Python variables cannot be restored.

A record comes from a notebook that anyone may have written, so `/undo` acts only on a
record this person's sessions signed (store/signature.py); any other is shown with what it
would have reverted, and nothing is written. Even a signed change passes the file tools'
gates: never inside `.git`, never a start-up file (those are left to the person), never
outside the workspace, never through a symlink.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.errors import ToolError
from elelem_kernel.store import signature
from elelem_kernel.text import shorten
from elelem_kernel.tools.changes import digest
from elelem_kernel.tools.notebook_disk import ordinal
from elelem_kernel.tools.protected import check_writable, startup_code
from elelem_kernel.tools.workspace import Workspace, atomic_write

if TYPE_CHECKING:
    from elelem_kernel.agent.record import TurnRecord
    from elelem_kernel.agent.session import Session
    from elelem_kernel.tools.extras import Change
    from elelem_kernel.tools.notebook_live import Link

VARIABLES = "Python variables the turn changed cannot be restored."


def last_undoable(session: Session) -> TurnRecord | None:
    """The newest turn of the conversation with changes that is not undone."""
    conversation = session.conversation
    for record in reversed(conversation.turns):
        if record.get("changes") and not record.get("undone"):
            return record
    return None


async def undo(session: Session, link: Link | None, turn: str | None = None) -> str:
    """Revert the last undoable turn (which must be `turn` when one is named); Markdown
    saying what was reverted and what was not."""
    record = last_undoable(session)
    if record is None:
        return "nothing to undo: no turn of this conversation changed files or cells"
    if turn is not None and record.get("turn") != turn:
        return (
            "Not undone: that is not the last turn that changed something. Undo goes back "
            f"turn by turn; the last one is “{_head(record.get('prompt'))}”."
        )
    if not signature.verified(record):
        return unsigned(record)
    ws = Workspace(session.workspace)
    reverted, left = await _walk(ws, link, reversed(record["changes"]), _file, lambda c: c)
    await _mark(session, link, record, True, left)
    lines = [f"Undid the turn “{_head(record.get('prompt'))}”: it is no longer sent to the model."]
    if reverted:
        lines.append("Reverted: " + ", ".join(reverted) + ".")
    if left:
        lines.append("Left alone:\n" + "\n".join(f"- {line}" for line in left))
    ran = any(
        c.get("name") in ("python", "notebook_run")
        for r in record.get("rounds") or []
        for c in r.get("calls") or []
    )
    lines.append(VARIABLES + (" This turn ran Python code." if ran else ""))
    return "\n\n".join(lines)


def next_redoable(session: Session) -> TurnRecord | None:
    """The oldest undone turn after the newest turn with changes that is not undone:
    `/undo` went back turn by turn, `/redo` goes forward in the same order."""
    changed = [r for r in session.conversation.turns if r.get("changes")]
    kept = [i for i, r in enumerate(changed) if not r.get("undone")]
    undone = changed[(kept[-1] + 1 if kept else 0) :]
    return undone[0] if undone else None


async def redo(session: Session, link: Link | None) -> str:
    """Apply again the changes of the turn `/undo` undid last in order; Markdown saying
    what was applied and what was not. A file goes forward only where it is as the undo
    left it; a cell only where it is as before the turn."""
    record = next_redoable(session)
    if record is None:
        return "nothing to redo: no undone turn after the last change"
    if not signature.verified(record):
        return unsigned(record, "redo")
    ws = Workspace(session.workspace)
    applied, left = await _walk(ws, link, record["changes"], _file_again, forward)
    await _mark(session, link, record, False, left)
    lines = [f"Redid the turn “{_head(record.get('prompt'))}”: it is sent to the model again."]
    if applied:
        lines.append("Applied again: " + ", ".join(applied) + ".")
    if left:
        lines.append("Left alone:\n" + "\n".join(f"- {line}" for line in left))
    return "\n\n".join(lines)


def forward(change: Change) -> Change:
    """A cell change turned around, so that the frontend's `revert` applies it again."""
    action, cell = change.get("action"), change.get("cell")
    if action == "insert":
        return {
            "kind": "cell",
            "action": "delete",
            "cell": cell,
            "before": change.get("after"),
            "cell_type": change.get("cell_type", "code"),
            "from_index": change.get("index") or 0,
        }
    if action == "delete":
        return {"kind": "cell", "action": "insert", "cell": cell, "after": change.get("before")}
    if action == "move":
        return {
            "kind": "cell",
            "action": "move",
            "cell": cell,
            "from_index": change.get("index") or 0,
        }
    return {
        "kind": "cell",
        "action": str(action),
        "cell": cell,
        "before": change.get("after"),
        "after": change.get("before"),
    }


async def _cell(link: Link, change: Change, what: str, done: list[str], left: list[str]) -> None:
    """Ask the open notebook to put one cell back as `change` says."""
    try:
        answer = await link.request("revert", timeout=30, **change)
    except Exception as e:
        left.append(f"{what}: {e}")
        return
    answer = answer if isinstance(answer, dict) else {}
    if answer.get("reverted"):
        done.append(what)
    else:
        left.append(f"{what}: {answer.get('why') or 'not reverted'}")


async def _mark(
    session: Session, link: Link | None, record: TurnRecord, undone: bool, left: list[str]
) -> None:
    """Mark the turn undone (or not) here and in the notebook's saved record."""
    record["undone"] = undone
    if undone:
        session.conversation.forgotten.add(record["turn"])
    else:
        session.conversation.forgotten.discard(record["turn"])
    if link is not None:  # the saved record says so too, for a later restore
        try:
            await link.request("mark_undone", timeout=30, turn=record.get("turn"), undone=undone)
        except Exception as e:
            left.append(f"the turn's record in the notebook: {e}")


async def _walk(
    ws: Workspace,
    link: Link | None,
    changes: Iterable[Change],
    file_step: Callable[[Workspace, Change, str, list[str], list[str]], None],
    cell_change: Callable[[Change], Change],
) -> tuple[list[str], list[str]]:
    """Take each change one step (`file_step` for a file, the frontend's `revert` of
    `cell_change(change)` for a cell); what was done and what was left alone, and why."""
    done: list[str] = []
    left: list[str] = []
    for change in changes:
        what = _name(change)
        if "too_large" in change:
            left.append(f"{what}: {change['too_large']}")
        elif change.get("kind") == "file":
            file_step(ws, change, what, done, left)
        elif link is None:
            left.append(f"{what}: the open notebook is not reachable from here")
        else:
            await _cell(link, cell_change(change), what, done, left)
    return done, left


def unsigned(record: TurnRecord, verb: str = "undo") -> str:
    """What `/undo` (or `/redo`) says of a record it will not act on, and what it would
    have reverted."""
    would = [_name(change) for change in record.get("changes") or [] if isinstance(change, dict)]
    return (
        f"Not {verb}ne: the turn “{_head(record.get('prompt'))}” is not signed by your own "
        "sessions (its record may come from someone else's notebook, or was altered or cut "
        f"to fit since), so {verb} does not act on it. Nothing was written.\n\n"
        "It would have reverted: " + (", ".join(would) or "nothing") + "."
    )


def _file(ws: Workspace, change: Change, what: str, reverted: list[str], left: list[str]) -> None:
    try:
        target = _gated(ws, str(change.get("path")))
    except ToolError as e:
        left.append(f"{what}: {e}")
        return
    if digest(target) != change.get("after_sha"):
        left.append(f"{what}: changed since the turn")
        return
    if change.get("created"):
        target.unlink(missing_ok=True)
    else:
        atomic_write(target, str(change.get("before") or "").encode("utf-8"))
    reverted.append(what)


def _file_again(
    ws: Workspace, change: Change, what: str, applied: list[str], left: list[str]
) -> None:
    after = change.get("after")
    if not isinstance(after, str):
        left.append(f"{what}: its text after the turn was not kept (too large)")
        return
    try:
        target = _gated(ws, str(change.get("path")))
    except ToolError as e:
        left.append(f"{what}: {e}")
        return
    before = change.get("before")
    expected = None if change.get("created") else _sha(str(before or ""))
    if digest(target) != expected:
        left.append(f"{what}: changed since the undo")
        return
    atomic_write(target, after.encode("utf-8"))
    applied.append(what)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _gated(ws: Workspace, path: str) -> Path:
    """The file a change names, once it passes the file tools' gates; `ToolError` if not."""
    target = ws.resolve(path)
    check_writable(ws, path, target)
    lexical = Path(os.path.normpath(ws.root / Path(path).expanduser()))
    if lexical != target:
        raise ToolError("reached through a symlink: undo never writes through one")
    why = startup_code(ws, path)
    if why is not None:
        raise ToolError(f"{why}; undo leaves start-up files to you")
    return target


def _name(change: Change) -> str:
    if change.get("kind") == "file":
        return f"`{change.get('path')}`"
    label = change.get("label")  # as the person saw it when the turn changed it
    if not isinstance(label, str) or not label:
        index = change.get("index")
        label = f"the {ordinal(index + 1)} cell" if isinstance(index, int) else "a cell"
    return f"{label} ({change.get('action')})"


def _head(prompt: object) -> str:
    text = " ".join(str(prompt or "").split())
    return shorten(text, 61)
