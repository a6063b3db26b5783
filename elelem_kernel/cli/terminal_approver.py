"""The terminal approval channel: show exactly what a call will do, ask y / n / a.

The CLI uses it when stdin and stderr are terminals; elsewhere the session denies with a
message naming `--mode auto` and `--yes`. The question goes to stderr so that stdout stays
the reply (and `--json` stays parseable).

The preview is shown through `visible`: an escape sequence or a carriage return in a
command appears as `\x1b` or `\r` instead of redrawing what the person approves. The
answer is read on the event loop (not in a worker thread), so Ctrl-C or a signal at the
question ends the turn at once instead of waiting for Enter, and no line typed later is
swallowed by a reader left behind.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TextIO

from elelem_kernel.agent.approval import ApprovalRequest, Decision, decision_for
from elelem_kernel.render.approval_question import heading, preview_lines
from elelem_kernel.visible import visible

QUESTION = "Allow? [y]es / [n]o / [a]lways for this tool: "


class TerminalApprover:
    """Asks the person at a terminal; an empty answer or end of input means no."""

    def __init__(self, stream_in: TextIO | None = None, stream_out: TextIO | None = None):
        self.stream_in = stream_in
        self.stream_out = stream_out
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._pending = b""  # read past the end of the last answer (a pipe gives several)

    async def approve(self, request: ApprovalRequest) -> Decision:
        """Show the request's preview and return the person's answer."""
        stream_in = self.stream_in or sys.stdin
        out = self.stream_out or sys.stderr
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:  # a chat's turns: a loop each
            self._lock = (loop, asyncio.Lock())
        async with self._lock[1]:
            out.write(self.format(request, color=_colors(out)))
            for _ in range(3):
                out.write(QUESTION)
                out.flush()
                line = await self._readline(stream_in)
                if not line:
                    out.write("\n(no answer: not allowed)\n")
                    out.flush()
                    return "deny"
                answer = decision_for(line.strip() or "n")
                if answer is not None:
                    if answer == "always":
                        name = visible(request.name)
                        out.write(f"({name} is allowed for the rest of this session)\n")
                        out.flush()
                    return answer
                out.write("Please answer y, n or a.\n")
            return "deny"

    @staticmethod
    def format(request: ApprovalRequest, color: bool = False) -> str:
        """The request as the person reads it: what tool, what kind, then the preview."""
        shown = preview_lines(request)
        if color:
            shown = [_paint(line) for line in shown]
        body = "\n".join("  " + line for line in shown)
        title = heading(request)
        if color:
            title = f"\x1b[1m{title}\x1b[0m"
        return f"\n{title}\n{body}\n"

    async def _readline(self, stream: TextIO) -> str:
        """One line from `stream` ('' at its end), waiting on the event loop."""
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            return stream.readline()  # not a file (a test's StringIO): it never blocks
        while b"\n" not in self._pending:
            await _readable(fd)
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            self._pending += chunk
        line, newline, self._pending = self._pending.partition(b"\n")
        return (line + newline).decode(errors="replace")


async def _readable(fd: int) -> None:
    """Return once `fd` can be read; cancelling stops the wait and leaves nothing behind."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    try:
        loop.add_reader(fd, _settle, ready)
    except (OSError, NotImplementedError, ValueError):
        return  # a regular file or a loop without readers: the read does not block for long
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def _settle(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


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
