"""The turn record: what one turn did, kept in the notebook and in the conversation.

    {"v": 1, "conversation", "turn", "cell", "provider", "model", "prompt", "reply",
     "rounds": [{"thinking", "text", "calls": [{"id", "name", "arguments", "result", "ok", "ms"}]}],
     "usage": {...}, "stop", "started", "ms"}

A record holds only its own turn, never API keys, never opaque provider blobs; long tool
results are cut with a marker so a notebook grows by about one turn's text per turn.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone
from typing import Any

VERSION = 1
#: Records that carry a compaction are version 2 (older readers skip them, saying so).
COMPACTION_VERSION = 2
RESULT_LIMIT = 8_000  #: characters of a tool result kept in the record
USAGE_KEYS = ("input", "output", "cache_read", "cache_write")


def new_id() -> str:
    """A short random id for turns and conversations."""
    return uuid.uuid4().hex[:12]


def cut(text: str, limit: int = RESULT_LIMIT) -> str:
    """`text` bounded to `limit` characters, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [truncated: {len(text) - limit} more characters]"


def add_usage(total: dict[str, int], usage: dict[str, Any]) -> dict[str, int]:
    """Add the token counts of `usage` into `total` (in place) and return it."""
    for key in USAGE_KEYS:
        value = usage.get(key) or 0
        if isinstance(value, (int, float)):
            total[key] = total.get(key, 0) + int(value)
    return total


class TurnRecorder:
    """Builds the record of one turn from provider events and tool results."""

    def __init__(
        self,
        *,
        conversation: str,
        prompt: str,
        provider: str,
        model: str | None,
        cell: str | None = None,
    ):
        self.started = time.monotonic()
        self.record: dict[str, Any] = {
            "v": VERSION,
            "conversation": conversation,
            "turn": new_id(),
            "cell": cell,
            "provider": provider,
            "model": model,
            "prompt": prompt,
            "reply": "",
            "rounds": [],
            "usage": {key: 0 for key in USAGE_KEYS},
            "stop": None,
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "ms": 0,
        }
        self._round_usage: dict[str, Any] = {}

    @property
    def rounds(self) -> list[dict[str, Any]]:
        return self.record["rounds"]

    def start_round(self) -> None:
        self._close_usage()
        self.rounds.append({"thinking": "", "text": "", "calls": []})

    def event(self, event: dict[str, Any]) -> None:
        """Record one provider event of the current round."""
        kind = event.get("type")
        current = self.rounds[-1]
        if kind == "saying":
            current["text"] += str(event.get("text", ""))
        elif kind == "thinking":
            current["thinking"] += str(event.get("text", ""))
        elif kind == "doing":
            current["calls"].append(
                {
                    "id": event.get("id"),
                    "name": event.get("name"),
                    "arguments": event.get("arguments", {}),
                    "result": None,
                    "ok": None,
                    "ms": 0,
                }
            )
        elif kind == "usage":
            # A provider may report usage more than once a round; the last report wins.
            self._round_usage = dict(event)

    def result(self, call_id: str, result: dict[str, Any], ms: int) -> None:
        """Record the result of a call of the current round."""
        for call in self.rounds[-1]["calls"]:
            if call["id"] == call_id and call["result"] is None:
                call["result"] = cut(json.dumps(result, ensure_ascii=False, default=str))
                call["ok"] = bool(result.get("ok"))
                call["ms"] = ms
                return

    def finish(self, stop: str, error: str | None = None) -> dict[str, Any]:
        """Close the record: every call gets a result, the reply and totals are set."""
        self._close_usage()
        for round_ in self.rounds:
            for call in round_["calls"]:
                if call["result"] is None:
                    why = {"interrupted": "interrupted by the person"}.get(stop, f"not run: {stop}")
                    call["result"] = json.dumps({"ok": False, "error": why})
                    call["ok"] = False
        texts = [r["text"] for r in self.rounds if r["text"]]
        last = self.rounds[-1]["text"] if self.rounds else ""
        self.record["reply"] = last or "\n\n".join(texts)
        self.record["stop"] = stop
        if error:
            self.record["error"] = error
        self.record["ms"] = int((time.monotonic() - self.started) * 1000)
        return self.record

    def _close_usage(self) -> None:
        if self._round_usage:
            add_usage(self.record["usage"], self._round_usage)
            self._round_usage = {}
