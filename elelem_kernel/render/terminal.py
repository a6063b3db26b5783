"""Terminal renderers: a readable stream for people, JSON lines for programs.

On a terminal, thinking is dimmed and each tool call is one line while the reply streams.
Piped, progress goes to stderr and only the reply to stdout, so `> file` captures the reply.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from ..agent.pricing import cost, format_cost
from .cards import footer_text

DIM, BOLD, RED, GREEN, YELLOW, RESET = (
    "\033[2m",
    "\033[1m",
    "\033[31m",
    "\033[32m",
    "\033[33m",
    "\033[0m",
)
JSON_TYPES = ("block_start", "block_delta", "block_stop", "turn_end")


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TerminalRenderer:
    """Writes block events for a person: reply to `out`, progress to `err`."""

    def __init__(
        self, out: IO[str] | None = None, err: IO[str] | None = None, color: bool | None = None
    ):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.tty = self.out.isatty()
        self.color = self.err.isatty() if color is None else color
        self.kinds: dict[int, str] = {}
        self.calls: dict[str, dict[str, Any]] = {}
        self.text_at_line_start = True
        self.provider: str | None = None
        self.model: str | None = None

    def _paint(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _progress(self, text: str) -> None:
        # On a terminal progress and reply share the screen; keep them on separate lines.
        if self.tty and not self.text_at_line_start:
            self.out.write("\n")
            self.text_at_line_start = True
        self.err.write(text)
        self.err.flush()

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "status":
            self.provider, self.model = event.get("provider"), event.get("model")
        elif kind == "block_start":
            self.kinds[event["index"]] = event["block"]
            if event["block"] == "thinking":
                self._progress(self._paint(DIM, "thinking: "))
            elif event["block"] == "tool_use":
                self.calls[str(event.get("id"))] = event
                line = f"→ {event.get('name')}({_short(event.get('arguments', {}))})\n"
                self._progress(self._paint(YELLOW, line))
            elif event["block"] == "tool_result":
                call = self.calls.get(str(event.get("id")), {})
                mark = self._paint(GREEN, "✓") if event.get("ok") else self._paint(RED, "✗")
                self._progress(
                    f"{mark} {call.get('name', '')}: {_short(event.get('content', ''), 100)}\n"
                )
        elif kind == "block_delta":
            block = self.kinds.get(event["index"])
            if block == "thinking":
                self._progress(self._paint(DIM, event["text"]))
            elif block == "text":
                self.out.write(event["text"])
                self.out.flush()
                self.text_at_line_start = event["text"].endswith("\n")
        elif kind == "block_stop":
            if self.kinds.get(event["index"]) == "thinking":
                self._progress("\n")
            elif self.kinds.get(event["index"]) == "text":
                self.out.write("\n\n" if self.tty else "\n")
                self.out.flush()
                self.text_at_line_start = True
        elif kind == "tool_state" and event.get("state") == "declined":
            self._progress(self._paint(RED, "declined\n"))
        elif kind == "compaction":
            from ..agent.compaction import note

            self._progress(self._paint(YELLOW if event.get("failed") else DIM, note(event) + "\n"))
        elif kind == "turn_end":
            self._end(event)

    def _end(self, event: dict[str, Any]) -> None:
        if event.get("error"):
            self._progress(self._paint(RED, f"Error: {event['error']}\n"))
        if event.get("stop") == "interrupted":
            self._progress(self._paint(RED, "interrupted\n"))
        if not event.get("rounds"):
            return  # nothing was asked of the model: no figures to give
        usage = event.get("usage") or {}
        dollars = cost(self.provider or "", self.model, usage)
        footer = footer_text(
            usage,
            event.get("ms"),
            event.get("rounds"),
            event.get("stop"),
            self.provider,
            self.model,
            "cost unknown" if dollars is None else format_cost(dollars),
            event.get("context"),
        )
        self._progress(self._paint(DIM, footer + "\n"))


class JsonRenderer:
    """Writes the documented block events as one JSON object a line."""

    def __init__(self, out: IO[str] | None = None):
        self.out = out or sys.stdout

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("type") in JSON_TYPES:
            self.out.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.out.flush()
