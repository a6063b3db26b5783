"""The turn record: what one turn did, kept in the notebook and in the conversation.

    {"v": 1, "conversation", "turn", "cell", "provider", "model", "prompt", "reply",
     "rounds": [{"thinking", "text", "calls": [{"id", "name", "arguments", "result", "ok", "ms"}]}],
     "usage": {...}, "stop", "started", "ms"}

A record holds only its own turn, never API keys, never opaque provider blobs; long tool
results are cut with a marker so a notebook grows by about one turn's text per turn.

Everything saved must restore: call arguments and results are kept to `DEPTH_LIMIT`
levels of nesting (deeper parts become a marker string; 900 levels crashed the notebook
writer with a RecursionError), and `fit` cuts a whole record under the restore limit of
`MAX_RECORD_BYTES` (a larger record used to be saved and then skipped on restore).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Literal, cast

from elelem_kernel.events import ProviderEvent, Usage
from elelem_kernel.images import ImageEntry
from elelem_kernel.store.record_format import MAX_RECORD_BYTES, VERSION, larger_than

# The record's shape lives with its format (the store reads it too); named here for writers.
from elelem_kernel.store.record_format import BudgetEntry as BudgetEntry
from elelem_kernel.store.record_format import CompactionEntry as CompactionEntry
from elelem_kernel.store.record_format import Meter as Meter
from elelem_kernel.store.record_format import RecordCall as RecordCall
from elelem_kernel.store.record_format import RecordRound as RecordRound
from elelem_kernel.store.record_format import TurnRecord as TurnRecord
from elelem_kernel.text import clip

RESULT_LIMIT = 8_000  #: characters of a tool result kept in the record
ARGUMENTS_LIMIT = 32_000  #: characters of a call's arguments (as JSON) kept in the record
DEPTH_LIMIT = 20  #: levels of nesting kept in recorded arguments and results
TOO_DEEP = "… [nested too deeply: cut]"
#: Texts are cut to these lengths in turn, longest first, until a record fits.
FIT_CAPS = (200_000, 50_000, 10_000, 2_000)
LEFT_OUT = (
    "\n\n… [the rounds and tool calls of this turn were left out of the record: "
    "it would not fit the restore limit]"
)
UsageKey = Literal["input", "output", "cache_read", "cache_write"]
USAGE_KEYS: tuple[UsageKey, ...] = ("input", "output", "cache_read", "cache_write")


def new_id() -> str:
    """A short random id for turns and conversations: 12 hex digits, as a uuid4's first
    twelve (`uuid` would be one more module on every turn's path for the same bytes)."""
    return os.urandom(6).hex()


def cut(text: str, limit: int = RESULT_LIMIT) -> str:
    """`text` bounded to `limit` characters, with a marker saying how much was cut."""
    return clip(text, limit, "\n")


def bounded(value: object, depth: int = DEPTH_LIMIT, limit: int | None = RESULT_LIMIT) -> object:
    """`value` as plain JSON data: containers nested deeper than `depth` replaced by
    `TOO_DEEP`, strings cut to `limit` (None: kept whole), anything else as its `str`."""
    if isinstance(value, str):
        return value if limit is None else cut(value, limit)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (dict, list, tuple)) and depth <= 0:
        return TOO_DEEP
    if isinstance(value, dict):
        return {str(key): bounded(inner, depth - 1, limit) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [bounded(inner, depth - 1, limit) for inner in value]
    return bounded(str(value), depth, limit)


def deeper_than(value: object, depth: int = DEPTH_LIMIT) -> bool:
    """Whether containers in `value` nest more than `depth` levels (checked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if level >= depth:
                return True
            inner: Iterable[object] = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in inner)
    return False


def bounded_arguments(arguments: object) -> object:
    """Arguments as kept in the record: `bounded`, and as cut JSON text past `ARGUMENTS_LIMIT`."""
    kept = bounded(arguments)
    text = json.dumps(kept, ensure_ascii=False)
    return kept if len(text) <= ARGUMENTS_LIMIT else cut(text, ARGUMENTS_LIMIT)


def fit(record: TurnRecord, limit: int = MAX_RECORD_BYTES * 9 // 10) -> TurnRecord:
    """Cut `record` (in place) until its estimated size is under `limit`; return it.

    Long texts anywhere in it are cut, longest allowances first (an id or name is only
    cut when it alone is thousands of characters long); if many calls still do not fit,
    the rounds make way for the reply alone, saying so.
    """
    for cap in FIT_CAPS:
        if not larger_than(record, limit):
            return record
        _cut_texts(record, cap)
    if larger_than(record, limit):
        reply = str(record.get("reply") or "")
        record["rounds"] = [{"thinking": "", "text": reply + LEFT_OUT, "calls": []}]
        known = ("v", "conversation", "turn", "cell", "provider", "model", "prompt", "reply")
        extra = ("rounds", "usage", "stop", "started", "ms", "error", "cost")
        loose = cast(dict[str, object], record)  # a foreign record's keys are any strings
        for key in [key for key in loose if key not in known + extra]:
            del loose[key]
    return record


def _cut_texts(value: object, cap: int) -> None:
    """Cut every string longer than `cap` inside `value`'s containers, in place."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            keys = list(item)
        elif isinstance(item, list):
            keys = list(range(len(item)))
        else:
            continue
        for key in keys:
            inner = item[key]
            if isinstance(inner, str) and len(inner) > cap:
                item[key] = cut(inner, cap)
            elif isinstance(inner, (dict, list)):
                stack.append(inner)


def add_usage(total: Usage, usage: Mapping[str, object]) -> Usage:
    """Add the token counts of `usage` into `total` (in place) and return it; a count below
    zero or not finite is no count (a server's nonsense must not lower a total)."""
    for key in USAGE_KEYS:
        value = usage.get(key) or 0
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if math.isfinite(value) and value >= 0:
                total[key] = total.get(key, 0) + int(value)
    return total


def unfinished(
    *,
    conversation: str,
    prompt: str,
    provider: str,
    model: str | None,
    cell: str | None,
    interrupted: bool,
) -> TurnRecord:
    """The record of a turn that ended before the session produced one (no rounds)."""
    recorder = TurnRecorder(
        conversation=conversation, prompt=prompt, provider=provider, model=model, cell=cell
    )
    if interrupted:
        return recorder.finish("interrupted")
    return recorder.finish("error", "the turn did not finish")


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
        self.record: TurnRecord = {
            "v": VERSION,
            "conversation": conversation,
            "turn": new_id(),
            "cell": cell,
            "provider": provider,
            "model": model,
            "prompt": prompt,
            "reply": "",
            "rounds": [],
            "usage": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0},
            "stop": None,
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "ms": 0,
        }
        self._round_usage: Mapping[str, object] = {}
        #: The current round's streamed pieces, joined once into the round (`+=` on a string
        #: kept in a dict copies it every time: a long reply in small deltas took minutes).
        self._pieces: dict[Literal["thinking", "text"], list[str]] = {"thinking": [], "text": []}

    @property
    def rounds(self) -> list[RecordRound]:
        return self.record["rounds"]

    def start_round(self) -> None:
        self._close_usage()
        self._join_pieces()
        self.rounds.append({"thinking": "", "text": "", "calls": []})

    def event(self, event: ProviderEvent) -> None:
        """Record one provider event (`events.ProviderEvent`) of the current round."""
        current = self.rounds[-1]
        if event["type"] == "saying":
            self._pieces["text"].append(str(event.get("text", "")))
        elif event["type"] == "thinking":
            self._pieces["thinking"].append(str(event.get("text", "")))
        elif event["type"] == "doing":
            current["calls"].append(
                {
                    "id": event.get("id"),
                    "name": event.get("name"),
                    "arguments": bounded_arguments(event.get("arguments", {})),
                    "result": None,
                    "ok": None,
                    "ms": 0,
                }
            )
        elif event["type"] == "usage":
            # A provider may report usage more than once a round; the last report wins.
            self._round_usage = dict(event)

    def round_is_empty(self) -> bool:
        """Whether the current round got nothing back yet: no text, thinking or call
        (streamed pieces not joined into it yet count)."""
        if not self.rounds or any(self._pieces.values()):
            return False
        current = self.rounds[-1]
        return not (current["text"] or current["thinking"] or current["calls"])

    def usage_so_far(self) -> Usage:
        """The tokens of the rounds so far, the current one's last report included."""
        return add_usage(self.record["usage"].copy(), self._round_usage)

    def result(
        self,
        call_id: str,
        result: Mapping[str, object],
        ms: int,
        images: list[ImageEntry] | None = None,
    ) -> None:
        """Record the result of a call of the current round (and images it showed)."""
        for call in self.rounds[-1]["calls"]:
            if call["id"] == call_id and call["result"] is None:
                call["result"] = cut(json.dumps(bounded(result), ensure_ascii=False, default=str))
                call["ok"] = bool(result.get("ok"))
                call["ms"] = ms
                if images:
                    call["images"] = images
                return

    def finish(self, stop: str, error: str | None = None) -> TurnRecord:
        """Close the record: every call gets a result, the reply and totals are set."""
        self._close_usage()
        self._join_pieces()
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

    def _join_pieces(self) -> None:
        if self.rounds:
            for key, pieces in self._pieces.items():
                if pieces:
                    self.rounds[-1][key] += "".join(pieces)
                    pieces.clear()

    def _close_usage(self) -> None:
        if self._round_usage:
            add_usage(self.record["usage"], self._round_usage)
            self._round_usage = {}
