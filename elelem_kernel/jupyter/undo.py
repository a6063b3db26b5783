"""`/undo`: revert the last turn that changed something and is not undone yet.

The turn's record keeps what it changed (`changes`, tools/changes.py). Files go back to
their text before the turn (a file the turn created is removed), open-notebook cells go
back through the frontend (the `revert` request of the `elelem.notebook` comm), each only
where it is unchanged since the turn; anything changed since, too large to have been
kept, or out of reach is listed and left alone. The turn stays in the notebook, its record
marked `undone` (in the notebook too, through the frontend, so a restored conversation
knows), and is no longer sent to the model. Python variables cannot be restored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from elelem_kernel.errors import ToolError
from elelem_kernel.text import shorten
from elelem_kernel.tools.changes import digest
from elelem_kernel.tools.workspace import Workspace, atomic_write

if TYPE_CHECKING:
    from elelem_kernel.agent.session import Session

VARIABLES = "Python variables the turn changed cannot be restored."


def last_undoable(session: Session) -> dict[str, Any] | None:
    """The newest turn of the conversation with changes that is not undone."""
    conversation = session.conversation
    for record in reversed(conversation.turns):
        if record.get("changes") and not record.get("undone"):
            return record
    return None


async def undo(session: Session, link: Any) -> str:
    """Revert the last undoable turn; Markdown saying what was reverted and what was not."""
    record = last_undoable(session)
    if record is None:
        return "nothing to undo: no turn of this conversation changed files or cells"
    reverted: list[str] = []
    left: list[str] = []
    ws = Workspace(session.workspace)
    for change in reversed(record["changes"]):
        what = _name(change)
        if "too_large" in change:
            left.append(f"{what}: {change['too_large']}")
        elif change.get("kind") == "file":
            _file(ws, change, what, reverted, left)
        elif link is None:
            left.append(f"{what}: the open notebook is not reachable from here")
        else:
            try:
                answer = await link.request("revert", timeout=30, **change)
            except Exception as e:
                left.append(f"{what}: {e}")
                continue
            answer = answer if isinstance(answer, dict) else {}
            if answer.get("reverted"):
                reverted.append(what)
            else:
                left.append(f"{what}: {answer.get('why') or 'not reverted'}")
    record["undone"] = True
    session.conversation.forgotten.add(record["turn"])
    if link is not None:  # the saved record says so too, for a later restore
        try:
            await link.request("mark_undone", timeout=30, turn=record.get("turn"))
        except Exception as e:
            left.append(f"the turn's record in the notebook: {e}")
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


def _file(
    ws: Workspace, change: dict[str, Any], what: str, reverted: list[str], left: list[str]
) -> None:
    try:
        target = ws.resolve(str(change.get("path")))
    except ToolError as e:
        left.append(f"{what}: {e}")
        return
    if digest(target) != change.get("after_sha"):
        left.append(f"{what}: changed since the turn")
        return
    if change.get("created"):
        target.unlink()
    else:
        atomic_write(target, str(change.get("before") or "").encode("utf-8"))
    reverted.append(what)


def _name(change: dict[str, Any]) -> str:
    if change.get("kind") == "file":
        return f"`{change.get('path')}`"
    return f"cell {change.get('cell')} ({change.get('action')})"


def _head(prompt: Any) -> str:
    text = " ".join(str(prompt or "").split())
    return shorten(text, 61)
