"""The terminal approval channel: show exactly what a call will do, ask y / n / a.

The CLI uses it when stdin and stderr are terminals; elsewhere the session denies with a
message naming `--mode auto` and `--yes`. The question goes to stderr so that stdout stays
the reply (and `--json` stays parseable).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TextIO

from elelem_kernel import text
from elelem_kernel.agent.approval import ApprovalRequest, Decision, decision_for

#: Preview lines shown before the rest is summarised.
PREVIEW_LINES = 400
QUESTION = "Allow? [y]es / [n]o / [a]lways for this tool: "


class TerminalApprover:
    """Asks the person at a terminal; an empty answer or end of input means no."""

    def __init__(self, stream_in: TextIO | None = None, stream_out: TextIO | None = None):
        self.stream_in = stream_in
        self.stream_out = stream_out
        self._lock = threading.Lock()

    def approve(self, request: ApprovalRequest) -> Decision:
        """Show the request's preview and return the person's answer."""
        stream_in = self.stream_in or sys.stdin
        out = self.stream_out or sys.stderr
        with self._lock:
            out.write(self.format(request, color=_colors(out)))
            for _ in range(3):
                out.write(QUESTION)
                out.flush()
                line = stream_in.readline()
                if not line:
                    out.write("\n(no answer: not allowed)\n")
                    out.flush()
                    return "deny"
                answer = decision_for(line.strip() or "n")
                if answer is not None:
                    if answer == "always":
                        out.write(f"({request.name} is allowed for the rest of this session)\n")
                        out.flush()
                    return answer
                out.write("Please answer y, n or a.\n")
            return "deny"

    @staticmethod
    def format(request: ApprovalRequest, color: bool = False) -> str:
        """The request as the person reads it: what tool, what kind, then the preview."""
        lines = request.preview.splitlines() or [""]
        more = len(lines) - PREVIEW_LINES
        shown = lines[:PREVIEW_LINES]
        if color:
            shown = [_paint(line) for line in shown]
        body = "\n".join("  " + line for line in shown)
        if more > 0:
            body += "\n  " + text.more(more, "lines")
        title = f"{request.name} wants to run ({request.kind})"
        if color:
            title = f"\x1b[1m{title}\x1b[0m"
        return f"\n{title}\n{body}\n"


def _colors(out: TextIO) -> bool:
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def _paint(line: str) -> str:
    if line.startswith(("+++", "---")):
        return f"\x1b[1m{line}\x1b[0m"
    if line.startswith("+"):
        return f"\x1b[32m{line}\x1b[0m"
    if line.startswith("-"):
        return f"\x1b[31m{line}\x1b[0m"
    if line.startswith("@@"):
        return f"\x1b[36m{line}\x1b[0m"
    return line
