"""The demo model fixing the cell that failed, in the notebook open in Jupyter.

Any prompt asking for a fix ("fix it", "fix the error", "can you fix this?"): read the
open notebook (`notebook_read`), find the code cell whose output is an error, propose a
fix with `notebook_edit` (a diff the person accepts or rejects in build mode), and answer
from what happened. "run the cell that failed" (verify or auto mode) runs it with
`notebook_run`, its output shown in the cell. The fixes are real but simple (`_fix`): a
`NameError` for a module never imported gets its import, one for a misspelt name the
closest name that exists (a builtin, or one another cell assigns); a `ZeroDivisionError`
is caught and said; a missing module is named with the `%pip install` that brings it.
Anything else is said plainly to be beyond the demo.
"""

from __future__ import annotations

import builtins
import difflib
import re
import sys
from collections.abc import Mapping

from elelem_kernel.events import Emit, Stop, ToolCallEntry
from elelem_kernel.providers.wire_json import items, mapping

STOP: Stop = {"type": "stop", "reason": "tool_use", "truncated": False}
END: Stop = {"type": "stop", "reason": "end_turn", "truncated": False}


#: Words asking for a fix, whatever the rest of the prompt says.
FIX = re.compile(r"\b(fix\w*|repair\w*|debug\w*)\b|\bwent wrong\b|\bwhy did (it|this)\b")
#: A prompt naming a file or tests asks about those, not about the notebook's cells.
ELSEWHERE = re.compile(r"\btests?\b|\w\.(py|md|txt|csv|json|toml|ya?ml)\b")

#: Names used without their import, and the import that brings each.
IMPORTS = {
    "np": "import numpy as np",
    "pd": "import pandas as pd",
    "plt": "import matplotlib.pyplot as plt",
}

#: What the person can ask next about the fixed cell, in the words of each front.
RUN_IT = {
    "kernel": ' or ask me to: run `/mode verify` in a cell, then the prompt "run the cell '
    'that failed".',
    "magic": ", or ask me to in a new cell:\n\n```\n%%elelem --mode verify\nrun the cell "
    "that failed\n```",
    "cli": ".",
}
BEYOND = (
    "The demo model fixes only a few common first errors (a name misspelt or never "
    "imported, a division by zero, a missing module); a real model can do more with this one."
)


def wanted(prompt: str, offered: set[str]) -> bool:
    """Whether this prompt asks for the fix (or the run) of a failing notebook cell."""
    low = prompt.lower()
    if "notebook_read" not in offered:
        return False
    if FIX.search(low):
        return not ELSEWHERE.search(low)
    return "cell" in low and bool(re.search(r"\brun\b", low))


def fetch(
    prompt: str,
    calls: list[ToolCallEntry],
    results: Mapping[str, Mapping[str, object]],
    offered: set[str],
    emit: Emit,
    front: str = "magic",
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
        text = "The fix is in the cell. Run it to check" + RUN_IT.get(front, ".")
        emit({"type": "saying", "text": text})
    else:
        cells = map(mapping, items(result.get("cells", [])))
        shown = "; ".join(str(o) for c in cells for o in items(c.get("outputs", [])))
        emit({"type": "saying", "text": f"I ran it. It printed: {shown or 'nothing'}"})
    emit(END)


def _after_read(prompt: str, result: Mapping[str, object], offered: set[str], emit: Emit) -> None:
    cells = [mapping(c) for c in items(result.get("cells"))]
    failed = next((c for c in cells if _error(c)), None)
    if failed is None:
        emit({"type": "saying", "text": "No cell shows an error: nothing to fix."})
        emit(END)
        return
    error = _error(failed) or ""
    where = f"Cell {failed.get('index')} failed with `{error.splitlines()[0]}`."
    if re.search(r"\brun\b", prompt.lower()) and not FIX.search(prompt.lower()):
        if "notebook_run" not in offered:
            emit({"type": "saying", "text": f"{where} Running it needs verify or auto mode."})
            emit(END)
            return
        emit({"type": "saying", "text": f"{where} Let me run it."})
        chosen = {"cells": [failed.get("id")]}
        emit({"type": "doing", "id": "demo_nb_run", "name": "notebook_run", "arguments": chosen})
        emit(STOP)
        return
    fixed, why = _fix(str(failed.get("source", "")), error, cells)
    if fixed is None:
        emit({"type": "saying", "text": f"{where} {why}"})
        emit(END)
        return
    if "notebook_edit" not in offered:
        emit({"type": "saying", "text": f"{where} Changing it needs build or auto mode."})
        emit(END)
        return
    emit({"type": "saying", "text": f"{where} {why} Here is the fix, as a diff to accept."})
    arguments = {"cell": failed.get("id"), "source": fixed}
    emit({"type": "doing", "id": "demo_nb_edit", "name": "notebook_edit", "arguments": arguments})
    emit(STOP)


def _error(cell: Mapping[str, object]) -> str | None:
    for output in items(cell.get("outputs")):
        if isinstance(output, str) and re.match(r"^\w+(Error|Exception)\b", output):
            return output
    return None


def _fix(source: str, error: str, cells: list[Mapping[str, object]]) -> tuple[str | None, str]:
    """The fixed source (None when the demo has none) and what it says about it."""
    first = error.splitlines()[0] if error else ""
    missing = re.match(r"NameError: name '(\w+)' is not defined", first)
    if missing:
        return _name_fix(source, missing.group(1), cells)
    module = re.match(r"ModuleNotFoundError: No module named '([\w.]+)'", first)
    if module:
        top = module.group(1).split(".")[0]
        return None, (
            f"`{top}` is not installed in this kernel's Python: run `%pip install {top}` in a "
            "cell (the package's name on PyPI may differ), then this cell again."
        )
    if first.startswith("ZeroDivisionError") and not re.search(r"^\s*[%!]", source, re.M):
        body = "\n".join(f"    {line}" if line.strip() else "" for line in source.splitlines())
        fixed = (
            f"try:\n{body}\nexcept ZeroDivisionError:\n"
            '    print("cannot divide by zero: the divisor is 0")'
        )
        return fixed, (
            "The cell divides by zero. Which divisor you meant I cannot know, so the fix "
            "catches the error and says so; change the divisor if it should not be 0."
        )
    return None, BEYOND


def _name_fix(source: str, wrong: str, cells: list[Mapping[str, object]]) -> tuple[str | None, str]:
    """A `NameError`'s fix: the import of a module never imported, else the closest name."""
    if wrong in IMPORTS or wrong in sys.stdlib_module_names:
        line = IMPORTS.get(wrong, f"import {wrong}")
        return f"{line}\n{source}", f"`{wrong}` is used but never imported."
    known = set(dir(builtins))
    for cell in cells:
        known.update(re.findall(r"^(\w+)\s*=", str(cell.get("source", "")), re.M))
    known.discard(wrong)
    close = difflib.get_close_matches(wrong, sorted(known), n=1, cutoff=0.6)
    if not close:
        return None, (
            f"Nothing named `{wrong}` exists, nor a name close to it: define it in a cell "
            f"above (`{wrong} = ...`) and run that cell first. {BEYOND}"
        )
    fixed = re.sub(rf"\b{re.escape(wrong)}\b", close[0], source)
    return fixed, f"`{wrong}` looks like a misspelling of `{close[0]}`."
