"""The demo model fixing the cell that failed, in the notebook open in Jupyter.

"fix the cell that failed": read the open notebook (`notebook_read`), find the code cell
whose output is an error, propose a fix with `notebook_edit` (a diff the person accepts
or rejects in build mode), and answer from what happened. "run the cell that failed"
(verify or auto mode) runs it with `notebook_run`, its output shown in the cell. The
fixes are real but simple: a `NameError` for a misspelt name gets the closest name that
exists (a builtin, or one another cell assigns).
"""

from __future__ import annotations

import builtins
import difflib
import re
from typing import Any

from elelem_kernel.events import Emit, Stop

STOP: Stop = {"type": "stop", "reason": "tool_use", "truncated": False}
END: Stop = {"type": "stop", "reason": "end_turn", "truncated": False}


def wanted(prompt: str, offered: set[str]) -> bool:
    """Whether this prompt asks for the fix (or the run) of a failing notebook cell."""
    low = prompt.lower()
    return "notebook_read" in offered and "cell" in low and bool(re.search(r"\b(fix|run)\b", low))


def fetch(
    prompt: str, calls: list[dict[str, Any]], results: dict[Any, Any], offered: set[str], emit: Emit
) -> None:
    """One round: read, then edit or run, then answer."""
    last = calls[-1] if calls else None
    if last is None:
        emit({"type": "saying", "text": "Let me read the notebook as you see it."})
        emit({"type": "doing", "id": "demo_nb_read", "name": "notebook_read", "arguments": {}})
        emit(STOP)
        return
    result = results.get(last.get("id"), {})
    if last.get("name") == "notebook_read":
        return _after_read(prompt, result, offered, emit)
    if not result.get("ok"):
        reason = result.get("error") or "it did not happen"
        emit(
            {
                "type": "saying",
                "text": f"The `{last.get('name')}` call did not go through: {reason}",
            }
        )
    elif last.get("name") == "notebook_edit":
        emit(
            {
                "type": "saying",
                "text": "The fix is in the cell. Run it to check, or ask me to "
                '(`%%elelem --mode verify` then "run the cell that failed").',
            }
        )
    else:
        shown = "; ".join(str(o) for c in result.get("cells", []) for o in c.get("outputs", []))
        emit({"type": "saying", "text": f"I ran it. It printed: {shown or 'nothing'}"})
    emit(END)


def _after_read(prompt: str, result: dict[str, Any], offered: set[str], emit: Emit) -> None:
    found = result.get("cells")
    cells: list[Any] = found if isinstance(found, list) else []
    failed = next((c for c in cells if _error(c)), None)
    if failed is None:
        emit({"type": "saying", "text": "No cell shows an error: nothing to fix."})
        emit(END)
        return
    error = _error(failed) or ""
    where = f"Cell {failed.get('index')} failed with `{error.splitlines()[0]}`."
    if re.search(r"\brun\b", prompt.lower()) and not re.search(r"\bfix\b", prompt.lower()):
        if "notebook_run" not in offered:
            emit({"type": "saying", "text": f"{where} Running it needs verify or auto mode."})
            emit(END)
            return
        emit({"type": "saying", "text": f"{where} Let me run it."})
        chosen = {"cells": [failed.get("id")]}
        emit({"type": "doing", "id": "demo_nb_run", "name": "notebook_run", "arguments": chosen})
        emit(STOP)
        return
    fixed = _fix(str(failed.get("source", "")), error, cells)
    if fixed is None:
        emit({"type": "saying", "text": f"{where} I do not know a safe fix for that one."})
        emit(END)
        return
    if "notebook_edit" not in offered:
        emit({"type": "saying", "text": f"{where} Changing it needs build or auto mode."})
        emit(END)
        return
    emit({"type": "saying", "text": f"{where} Here is the fix, as a diff for you to accept."})
    arguments = {"cell": failed.get("id"), "source": fixed}
    emit({"type": "doing", "id": "demo_nb_edit", "name": "notebook_edit", "arguments": arguments})
    emit(STOP)


def _error(cell: dict[str, Any]) -> str | None:
    for output in cell.get("outputs") or []:
        if isinstance(output, str) and re.match(r"^\w+(Error|Exception)\b", output):
            return output
    return None


def _fix(source: str, error: str, cells: list[Any]) -> str | None:
    """The source with the misspelt name of a NameError corrected, or None."""
    match = re.match(r"NameError: name '(\w+)' is not defined", error)
    if not match:
        return None
    wrong = match.group(1)
    known = set(dir(builtins))
    for cell in cells:
        known.update(re.findall(r"^(\w+)\s*=", str(cell.get("source", "")), re.M))
    known.discard(wrong)
    close = difflib.get_close_matches(wrong, sorted(known), n=1, cutoff=0.6)
    if not close:
        return None
    return re.sub(rf"\b{re.escape(wrong)}\b", close[0], source)
