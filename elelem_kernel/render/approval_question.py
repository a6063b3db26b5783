"""The approval question in words: the one text a terminal and a notebook's input box ask.

It names the tool and its kind, then shows the call's preview (what exactly will run or
change), bounded to the same lines and characters everywhere, with `[... N more lines]`
for the rest. Control characters appear as escapes (`visible`), so a preview cannot
redraw what the person approves.
"""

from __future__ import annotations

from elelem_kernel.agent.approval import ApprovalRequest
from elelem_kernel.text import clip_lines
from elelem_kernel.visible import visible

#: How much of a preview the question shows, lines and characters.
PREVIEW_LINES, PREVIEW_CHARS = 200, 20_000
#: A preview up to this long, on one line, is asked about on the question's own line.
ONE_LINE = 100


def heading(request: ApprovalRequest) -> str:
    """`bash wants to run (execute)`."""
    return f"{visible(request.name)} wants to run ({visible(request.kind)})"


def preview_lines(request: ApprovalRequest) -> list[str]:
    """The preview's lines as the person reads them, bounded, the rest summarised."""
    preview = visible(request.preview or "").strip("\n")
    return clip_lines(preview, PREVIEW_LINES, PREVIEW_CHARS) if preview else []


def question(request: ApprovalRequest) -> str:
    """The whole question on one prompt (`input()`): the preview, then y / n / a.

    A short one-line preview stays on the question's line; anything longer is shown line
    by line above it, so the end of a long command is not hidden.
    """
    name = visible(request.name)
    ask = f"? [y]es / [n]o / [a]lways for {name}: "
    lines = preview_lines(request)
    if not lines:
        return f"Allow {name}{ask}"
    if len(lines) == 1 and len(lines[0]) <= ONE_LINE:
        return f"Allow {name}: {lines[0]}{ask}"
    shown = "\n".join("  " + line for line in lines)
    return f"{heading(request)}:\n{shown}\nAllow {name}{ask}"
