"""A tool call in words: its states, arguments, results and durations.

The terminal, the static text/plain and Markdown outputs, the HTML cards (`cards.py`) and
the ACP updates all say these the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from elelem_kernel.text import shorten

TEXT_KEYS = ("content", "stdout", "output", "text", "stderr", "value", "diff")

#: state → (symbol, words)
STATES = {
    "approval": ("?", "waiting for approval"),
    "person": ("?", "waiting for you"),
    "running": ("…", "running"),
    "ok": ("✓", "ok"),
    "failed": ("✗", "failed"),
    "declined": ("⊘", "declined"),
    "interrupted": ("■", "interrupted"),
    "not run": ("⊘", "not run: the reply was cut off at max_tokens"),
    "over budget": ("⊘", "not run: over the budget"),
}


def arguments_text(arguments: object) -> str:
    """Tool arguments as pretty JSON."""
    try:
        return json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


#: Arguments that name a notebook cell by id or 0-based index: a person sees neither.
CELL_KEYS = frozenset({"cell", "cells"})


def short_arguments(arguments: object, limit: int = 50) -> str:
    """One line saying what a call is about: its first string argument (not a cell's id),
    cut to `limit`."""
    if isinstance(arguments, dict):
        for key, value in arguments.items():
            if key in CELL_KEYS:
                continue
            if isinstance(value, str) and value.strip() not in ("", ".", "./"):
                line = re.sub(r"\b([0-9a-f]{10})[0-9a-f]{30}\b", r"\1", " ".join(value.split()))
                return shorten(line, limit)
    return ""


def result_parts(result: object) -> tuple[str, list[tuple[str, str]]]:
    """A tool result as `(facts, texts)`: a short line of its small fields, and its text fields.

    Multi-line strings (file contents, command output) show as text, not as JSON with
    escapes; a result with no such field is pretty JSON (without the `ok` flag).
    """
    value: object = result
    if isinstance(result, str):
        try:
            value = json.loads(result)
        except ValueError:
            return "", [("", result)]
    if not isinstance(value, dict):
        return "", [("", arguments_text(value))]
    rest = {k: v for k, v in value.items() if k != "ok"}
    cells = notebook_cells(rest)
    if cells is not None:
        return cells
    if len(rest) == 1 and isinstance(next(iter(rest.values())), str):
        return "", [("", next(iter(rest.values())))]
    texts = [
        (k, v)
        for k, v in rest.items()
        if isinstance(v, str) and ("\n" in v or k in TEXT_KEYS or len(v) > 80)
    ]
    if not texts:
        return "", [("", arguments_text(rest))] if rest else []
    others = {k: v for k, v in rest.items() if k not in dict(texts)}
    small = {k: v for k, v in others.items() if isinstance(v, (str, int, float, bool)) or v is None}
    facts = " · ".join(f"{k}: {v}" for k, v in small.items())
    texts = [(k, v) for k, v in texts if v]
    big = {k: v for k, v in others.items() if k not in small}
    if big:
        texts.append(("", arguments_text(big)))
    if len(texts) == 1 and texts[0][0] in TEXT_KEYS:
        texts = [("", texts[0][1])]
    return facts, texts


def notebook_cells(result: Mapping[str, object]) -> tuple[str, list[tuple[str, str]]] | None:
    """A notebook tool's result (`cells`: a list of cell entries) in words: how many
    cells, each named as the person sees it, the failing ones with their error; None
    for any other result."""
    cells = result.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) and "index" in c for c in cells):
        return None
    lines = []
    for cell in cells:
        name = str(cell.get("shown_as") or f"cell {cell.get('index')}")
        first = str(cell.get("source") or "").strip().split("\n", 1)[0]
        errors = [o for o in cell.get("outputs") or [] if _is_error(o)]
        line = f"{name}: {shorten(first, 60)}" if first else name
        if errors:
            line += f"  ✗ {shorten(str(errors[0]).splitlines()[0], 80)}"
        lines.append(line)
    failing = sum(1 for line in lines if "  ✗ " in line)
    count = result.get("count", len(cells))
    facts = [f"{count} cells" if isinstance(count, int) else f"{len(cells)} cells"]
    if failing:
        facts.append(f"{failing} failing")
    small = ("path", "unsaved_changes", "ran", "error", "truncated", "not_run")
    facts += [f"{k}: {result[k]}" for k in small if k in result]
    return " · ".join(facts), [("cells", "\n".join(lines))]


def _is_error(output: object) -> bool:
    """An output summary (`summarize_outputs`) that is an exception: `Name: message`."""
    head = str(output).split(":", 1)[0]
    return head.isidentifier() and head.endswith(("Error", "Exception", "Interrupt", "Exit"))


def result_text(result: object) -> str:
    """A tool result as readable plain text (see `result_parts`)."""
    facts, texts = result_parts(result)
    blocks = [facts] if facts else []
    blocks += [f"{k}:\n{v}" if k else v for k, v in texts]
    return "\n".join(blocks)


def seconds(ms: float | None) -> str:
    """A duration for people: `850 ms`, `2.3 s`, `1 min 05 s`."""
    ms = ms or 0
    if ms < 1000:
        return f"{int(ms)} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, rest = divmod(int(ms / 1000), 60)
    return f"{minutes} min {rest:02d} s"


def state_of(call: Mapping[str, object]) -> str:
    """The state of a finished call of a turn record, from its `ok` flag and result."""
    if call.get("ok"):
        return "ok"
    text = str(call.get("result") or "")
    if "interrupted" in text:
        return "interrupted"
    if "cut off at max_tokens" in text:
        return "not run"
    if "not run: over the budget" in text:
        return "over budget"
    if "declined" in text or "not run" in text or "denied" in text:
        return "declined"
    return "failed"
