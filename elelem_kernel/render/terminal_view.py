"""Terminal renderers: a readable stream for people, JSON lines for programs.

On a terminal, thinking is dimmed and each tool call is one line while the reply streams.
Piped, progress goes to stderr and only the reply to stdout, so `> file` captures the reply.
The terminal renderer writes through one method, `_show`, which passes every text through
`visible` (model and tool text, notices, the compaction note, errors, even its own
words), so the only escape sequences a terminal receives are the renderer's own colours
(none with `NO_COLOR` set), and a new event type cannot forget it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import IO

from elelem_kernel.agent.blocks import BlockDelta, BlockEvent, BlockStart, BlockStop, TurnEnd
from elelem_kernel.render.footer import compaction_note, footer_line
from elelem_kernel.text import shorten
from elelem_kernel.visible import visible, visible_json

DIM, BOLD, RED, GREEN, YELLOW, RESET = (
    "\033[2m",
    "\033[1m",
    "\033[31m",
    "\033[32m",
    "\033[33m",
    "\033[0m",
)
JSON_TYPES = ("block_start", "block_delta", "block_stop", "notice", "compaction", "turn_end")
#: The keys of `turn_end` that `--json` prints (live views get more, such as the cost).
JSON_END_KEYS = (
    "type",
    "stop",
    "usage",
    "usage_estimated",
    "rounds",
    "ms",
    "error",
    "budget",
    "priced_by",
)


def _short(value: object, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(visible(text).split())
    return shorten(text, limit)


Piece = str | tuple[str, str]  #: text, or (colour, text)


class TerminalRenderer:
    """Writes block events for a person: reply to `out`, progress to `err`.

    Every character goes out through `_show`, which passes all text through `visible`
    and adds the renderer's own colours after that, so no event type can forget it.
    """

    def __init__(
        self, out: IO[str] | None = None, err: IO[str] | None = None, color: bool | None = None
    ):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.tty = self.out.isatty()
        if color is None:
            color = self.err.isatty() and not os.environ.get("NO_COLOR")
        self.color = color
        self.kinds: dict[int, str] = {}
        self.calls: dict[str, BlockStart] = {}
        self.text_at_line_start = True
        self.provider: str | None = None
        self.model: str | None = None

    def _show(self, stream: IO[str], *pieces: Piece) -> None:
        """The one place this renderer writes: each piece made `visible`, then coloured."""
        parts = []
        for piece in pieces:
            code, text = piece if isinstance(piece, tuple) else ("", piece)
            text = visible(text)
            parts.append(f"{code}{text}{RESET}" if code and self.color and text else text)
        stream.write("".join(parts))
        stream.flush()

    def _progress(self, *pieces: Piece) -> None:
        # On a terminal progress and reply share the screen; keep them on separate lines.
        if self.tty and not self.text_at_line_start:
            self._show(self.out, "\n")
            self.text_at_line_start = True
        self._show(self.err, *pieces)

    def _reply(self, text: str) -> None:
        self._show(self.out, text)

    def __call__(self, event: BlockEvent) -> None:
        if event["type"] == "status":
            self.provider, self.model = event.get("provider"), event.get("model")
        elif event["type"] == "block_start":
            self._start(event)
        elif event["type"] == "block_delta":
            self._delta(event)
        elif event["type"] == "block_stop":
            self._stop(event)
        elif event["type"] == "notice":
            self._progress((RED, f"{event.get('text', '')}\n"))
        elif event["type"] == "tool_state" and event.get("state") == "declined":
            self._progress((RED, "declined\n"))
        elif event["type"] == "compaction":
            note = compaction_note(event)
            self._progress((YELLOW if event.get("failed") else DIM, note + "\n"))
        elif event["type"] == "turn_end":
            self._end(event)

    def _start(self, event: BlockStart) -> None:
        self.kinds[event["index"]] = event["block"]
        if event["block"] == "thinking":
            self._progress((DIM, "thinking: "))
        elif event["block"] == "tool_use":
            self.calls[str(event.get("id"))] = event
            name = str(event.get("name"))
            self._progress((YELLOW, f"→ {name}({_short(event.get('arguments', {}))})\n"))
        elif event["block"] == "tool_result":
            call = self.calls.get(str(event.get("id")))
            name = (call.get("name") if call else None) or ""
            mark = (GREEN, "✓") if event.get("ok") else (RED, "✗")
            self._progress(mark, f" {name}: {_short(event.get('content', ''), 100)}\n")

    def _delta(self, event: BlockDelta) -> None:
        block = self.kinds.get(event["index"])
        if block == "thinking":
            self._progress((DIM, str(event["text"])))
        elif block == "text":
            self._reply(str(event["text"]))
            self.text_at_line_start = str(event["text"]).endswith("\n")

    def _stop(self, event: BlockStop) -> None:
        if self.kinds.get(event["index"]) == "thinking":
            self._progress("\n")
        elif self.kinds.get(event["index"]) == "text":
            self._reply("\n\n" if self.tty else "\n")
            self.text_at_line_start = True

    def _end(self, event: TurnEnd) -> None:
        if event.get("stop") in ("budget", "context_full"):  # the line says how to go on
            self._progress((YELLOW, f"{event.get('error')}\n"))
        elif event.get("error"):
            self._progress((RED, f"Error: {event['error']}\n"))
        if event.get("stop") == "max_tokens":
            self._progress((RED, "cut off at max_tokens: raise the limit with -o max_tokens=N\n"))
        if event.get("stop") == "interrupted":
            self._progress((RED, "interrupted\n"))
        if not event.get("rounds") and not event.get("budget"):
            return  # nothing was asked of the model: no figures to give
        self._progress((DIM, footer_line(event, self.provider, self.model) + "\n"))


class JsonRenderer:
    """Writes the documented block events as one JSON object a line (see `visible_json`)."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out or sys.stdout

    def __call__(self, event: BlockEvent) -> None:
        if event["type"] not in JSON_TYPES:
            return
        shown: Mapping[str, object] = event
        if event["type"] == "turn_end":
            fields = dict(event.items())
            shown = {key: fields[key] for key in JSON_END_KEYS if key in fields}
        self.out.write(visible_json(shown) + "\n")
        self.out.flush()
