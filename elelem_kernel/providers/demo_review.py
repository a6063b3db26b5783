"""The demo model's scripted code review: it really reads the diff through the tools.

Stateless; the step comes from this turn's messages:
1. no tool results yet: call `git` with the diff command the review prompt names;
2. the diff came back: scan its added lines with a few simple heuristics (bare `except:`,
   `== None`, mutable default arguments, division by zero or by `len(...)`, `eval(`,
   debug `print(` in modules) and call `report_finding` for each, located by the diff's
   own hunk headers (notebook cells by their `## cell ... id=...` headers);
3. findings recorded: a short summary that says this was the demo model.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from elelem_kernel.events import Emit, Message, ToolCallEntry, ToolMessage
from elelem_kernel.providers.wire_json import Tools, function, mapping

MAX_FINDINGS = 8
_COMMAND = re.compile(r"The diff: `git (diff[^`]*)`")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_CELL = re.compile(r"^## cell (\d+)(?: id=(\S+))? \((\w+)\)")


@dataclass
class Spot:
    """A heuristic's hit: where, how bad, what to say, what to put instead."""

    path: str
    line: int
    cell_id: str | None
    severity: str
    title: str
    body: str
    suggestion: str | None = None

    def arguments(self) -> dict[str, object]:
        args: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "severity": self.severity,
            "title": self.title,
            "body": self.body,
        }
        if self.cell_id:
            args["cell_id"] = self.cell_id
        if self.suggestion is not None:
            args["suggestion"] = self.suggestion
        return args


def _check(code: str, in_notebook: bool) -> tuple[str, str, str, str | None] | None:
    """(severity, title, body, suggestion) for one added line of Python, or None."""
    indent = code[: len(code) - len(code.lstrip())]
    if re.match(r"\s*except\s*:", code):
        return (
            "major",
            "Bare `except:` swallows every error",
            "A bare `except:` also catches `KeyboardInterrupt` and `SystemExit` and hides real bugs. "
            "Catch the exceptions you expect.",
            f"{indent}except Exception:",
        )
    if re.search(r"/\s*0(?![\d.])", code):
        return ("blocker", "Division by zero", "This always raises `ZeroDivisionError`.", None)
    match = re.search(r"/\s*len\((\w+)\)", code)
    if match:
        name = match.group(1)
        return (
            "major",
            f"Division by zero when `{name}` is empty",
            f"`len({name})` is 0 for an empty `{name}`, and the division raises `ZeroDivisionError`. "
            "Handle the empty case.",
            f"{code.rstrip()} if {name} else 0.0",
        )
    if re.search(r"def \w+\(.*=\s*(\[\]|\{\}|set\(\))", code):
        return (
            "major",
            "Mutable default argument",
            "The default list/dict is created once and shared by every call. Default to `None` "
            "and create it inside the function.",
            re.sub(r"=\s*(\[\]|\{\}|set\(\))", "=None", code),
        )
    if re.search(r"[!=]=\s*None\b", code):
        return (
            "minor",
            "Comparison to `None` with `==`",
            "Use `is None` / `is not None`: `==` can be overridden and is slower.",
            code.replace("!= None", "is not None").replace("== None", "is None"),
        )
    if re.search(r"\beval\(", code):
        return (
            "major",
            "`eval` of data",
            "`eval` runs arbitrary code; parse the value instead.",
            None,
        )
    if not in_notebook and re.match(r"\s*print\(", code):
        return ("nit", "Debug `print` left in", "Use `logging`, or remove the print.", None)
    return None


def scan(diff: str) -> list[Spot]:
    """Heuristic findings in the added Python lines of a unified (or cell-level) diff."""
    spots: list[Spot] = []
    path, cell_id, cell_type, line = "", None, "code", 0
    for text in diff.splitlines():
        if text.startswith("+++ "):
            path = text[4:].removeprefix("b/")
            cell_id, cell_type = None, "code"
        elif text.startswith("diff --git "):
            path, cell_id, cell_type = "", None, "code"
        elif _CELL.match(text):
            number, ident, cell_type = _CELL.match(text).groups()  # type: ignore[union-attr]
            cell_id = ident or f"#{number}"
        elif _HUNK.match(text):
            line = int(_HUNK.match(text).group(1)) - 1  # type: ignore[union-attr]
        elif text.startswith("+"):
            line += 1
            python = path.endswith(".py") or (path.endswith(".ipynb") and cell_type == "code")
            hit = _check(text[1:], path.endswith(".ipynb")) if python else None
            if hit:
                spots.append(Spot(path, line, cell_id, *hit))
        elif text.startswith(" "):
            line += 1
    return spots[:MAX_FINDINGS]


def _this_turn(messages: list[Message]) -> list[Message]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return messages[i:]
    return []


def _result(message: ToolMessage) -> Mapping[str, object]:
    try:
        value = json.loads(message.get("content") or "")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


async def _say(emit: Emit, text: str) -> None:
    for piece in re.findall(r"\s*\S+\s*|\s+", text):
        emit({"type": "saying", "text": piece})
        await asyncio.sleep(0)


async def fetch(messages: list[Message], tools: Tools, emit: Emit) -> None:
    """One round of the scripted review (see the module docstring)."""
    turn = _this_turn(messages)
    prompt = str(turn[0].get("content", "")) if turn else ""
    offered = {function(t)["name"] for t in tools}
    calls: dict[str, ToolCallEntry] = {
        c["id"]: c for m in turn if m["role"] == "assistant" for c in m.get("tool_calls") or []
    }
    results = [(calls.get(m.get("tool_call_id")), _result(m)) for m in turn if m["role"] == "tool"]
    reported = [(c, r) for c, r in results if c is not None and c.get("name") == "report_finding"]
    read = [r for c, r in results if c is not None and c.get("name") == "git"]
    said = ""
    if reported:
        said = _summary(reported)
        await _say(emit, said)
        emit({"type": "stop", "reason": "end_turn", "truncated": False})
    elif read:
        said = await _report(read, offered, emit)
    else:
        match = _COMMAND.search(prompt)
        command = match.group(1).strip() if match else "diff HEAD"
        emit({"type": "thinking", "text": "A review: first I read the diff through the git tool."})
        said = "I'll read the diff first."
        await _say(emit, said)
        emit({"type": "doing", "id": "demo_diff", "name": "git", "arguments": {"args": command}})
        emit({"type": "stop", "reason": "tool_use", "truncated": False})
    emit(
        {"type": "usage", "input": len(json.dumps(messages)) // 4, "output": max(1, len(said) // 4)}
    )


async def _report(read: list[Mapping[str, object]], offered: set[str], emit: Emit) -> str:
    """After the diff was read: report the spots the checks flag, or say there are none;
    what was said."""
    spots = scan("\n".join(str(r.get("output", "")) for r in read))
    if not spots or "report_finding" not in offered:
        said = (
            "Demo review (scripted heuristics, not a real model): I read the diff and found "
            "nothing my few checks look for. A real model reviews far more; set a provider "
            "with `-p`."
        )
        await _say(emit, said)
        emit({"type": "stop", "reason": "end_turn", "truncated": False})
        return said
    emit(
        {
            "type": "thinking",
            "text": f"The diff has {len(spots)} spots my checks flag; reporting them.",
        }
    )
    said = (
        f"I found {len(spots)} problem{'s' if len(spots) != 1 else ''} in the diff; reporting them."
    )
    await _say(emit, said)
    for i, spot in enumerate(spots):
        emit(
            {
                "type": "doing",
                "id": f"demo_finding_{i}",
                "name": "report_finding",
                "arguments": spot.arguments(),
            }
        )
    emit({"type": "stop", "reason": "tool_use", "truncated": False})
    return said


def _summary(reported: list[tuple[ToolCallEntry, Mapping[str, object]]]) -> str:
    lines = [
        f"Demo review (scripted heuristics, not a real model): I read the diff through the `git` "
        f"tool and reported {len(reported)} finding{'s' if len(reported) != 1 else ''}:",
        "",
    ]
    for call, result in reported:
        args = mapping(call.get("arguments"))
        where = result.get("location") or args.get("path", "?")
        flag = " (outside the diff)" if result.get("outside_diff") else ""
        lines.append(f"- **{args.get('severity')}** `{where}`{flag}: {args.get('title')}")
    lines += ["", "A real model reviews far more than these few checks; pick one with `-p`."]
    return "\n".join(lines)
