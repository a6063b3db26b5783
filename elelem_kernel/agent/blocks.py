"""Block layout: how one turn's provider events become indexed blocks.

A round shows its thinking and text blocks first; where they stop is `tool_base`. With `n`
tool calls in the round, call i's `tool_use` block is at `tool_base + i`, its
`tool_result` at `tool_base + n + i`, and the next round starts at `tool_base + 2n`.

- Blocks open lazily: no empty thinking block, and no index is used for one.
- Thinking closes before text opens; thinking that arrives after the round's text
  started is not shown (nor is text or thinking after the round's first tool call).
- The index advances only for a block that opened; the round advances once, on the last
  tool result.

Renderers place blocks by index, so a parallel call's result lands in its own card.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypedDict

from elelem_kernel.agent.record import BudgetEntry, CompactionEntry, Meter
from elelem_kernel.events import ProviderEvent, Usage
from elelem_kernel.images import ImageEntry

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired


class BlockStart(TypedDict):
    """A block opens at `index`: `thinking` and `text` fill with deltas; `tool_use` (id,
    name, arguments) and `tool_result` (id, ok, content: the JSON the model sees, images?)
    arrive whole and stop at once."""

    type: Literal["block_start"]
    index: int
    block: Literal["thinking", "text", "tool_use", "tool_result"]
    id: NotRequired[str | None]
    name: NotRequired[str | None]
    arguments: NotRequired[object]
    ok: NotRequired[bool]
    content: NotRequired[str]
    images: NotRequired[list[ImageEntry]]


class BlockDelta(TypedDict):
    """More text for the open block at `index`."""

    type: Literal["block_delta"]
    index: int
    text: str


class BlockStop(TypedDict):
    """The block at `index` is complete (every block that starts also stops)."""

    type: Literal["block_stop"]
    index: int


class Notice(TypedDict):
    """Something the person must know, said once."""

    type: Literal["notice"]
    text: str


class Status(TypedDict):
    """What the turn is waiting for: `waiting` (a model call started, nothing received
    yet: round, context) or `compacting` (turns)."""

    type: Literal["status"]
    state: Literal["waiting", "compacting"]
    provider: str
    model: str | None
    round: NotRequired[int]
    context: NotRequired[Meter]
    turns: NotRequired[int]


#: Where a call stands: asked about, running, done (ok or failed), declined by the person,
#: or never run (its reply cut off, or its results over a budget).
CallState = Literal["approval", "running", "ok", "failed", "declined", "not run", "over budget"]


class ToolState(TypedDict):
    """Where the call whose tool_use block is at `index` stands."""

    type: Literal["tool_state"]
    index: int | None
    id: str
    state: CallState
    preview: NotRequired[str]


class CompactionEvent(CompactionEntry):
    """The oldest turns were summarised (the record's `compaction` entry)."""

    type: Literal["compaction"]


class TurnEnd(TypedDict):
    """The last event of every turn."""

    type: Literal["turn_end"]
    stop: str
    usage: Usage
    rounds: int
    ms: int
    cost: float | None
    context: NotRequired[Meter]
    served_model: NotRequired[str]
    budget: NotRequired[list[BudgetEntry]]
    usage_estimated: NotRequired[bool]
    priced_by: NotRequired[str]
    error: NotRequired[str]


#: What a renderer is called with (`--json` prints the block events and `turn_end`).
BlockEvent = (
    BlockStart | BlockDelta | BlockStop | Notice | Status | ToolState | CompactionEvent | TurnEnd
)
#: A view: called with each `BlockEvent`.
Renderer = Callable[[BlockEvent], None]


class BlockLayout:
    """Turn provider events and tool results into `block_*` events for a renderer."""

    def __init__(self, out: Renderer):
        self.out = out
        self.base = 0  #: first index of the current round
        self.next = 0  #: next free index for a thinking/text block of this round
        self.open: int | None = None
        self.open_kind: str | None = None
        self.text_started = False
        self.calls: list[str] = []  #: ids of this round's tool calls, in order
        self.results = 0
        self.rounds = 0

    @property
    def tool_base(self) -> int:
        """Index of this round's first tool_use block."""
        return self.next

    def event(self, event: ProviderEvent) -> None:
        """Lay out one provider event (`saying`, `thinking`, `doing`); others are ignored."""
        if event["type"] == "thinking":
            if self.text_started or self.calls or not event.get("text"):
                return
            self._delta("thinking", event["text"])
        elif event["type"] == "saying":
            if self.calls or not event.get("text"):
                return
            self.text_started = True
            self._delta("text", event["text"])
        elif event["type"] == "doing":
            self._close()
            index = self.tool_base + len(self.calls)
            self.calls.append(str(event.get("id", "")))
            self.out(
                {
                    "type": "block_start",
                    "index": index,
                    "block": "tool_use",
                    "id": event.get("id"),
                    "name": event.get("name"),
                    "arguments": event.get("arguments", {}),
                }
            )
            self.out({"type": "block_stop", "index": index})

    def tool_index(self, call_id: str) -> int | None:
        """Index of the tool_use block of call `call_id` in this round."""
        if call_id in self.calls:
            return self.tool_base + self.calls.index(call_id)
        return None

    def tool_result(
        self, call_id: str, ok: bool, content: object, images: list[ImageEntry] | None = None
    ) -> None:
        """Lay out the result of one of this round's calls; the last one ends the round."""
        self._close()
        if call_id not in self.calls:
            return
        n = len(self.calls)
        index = self.tool_base + n + self.calls.index(call_id)
        event: BlockStart = {
            "type": "block_start",
            "index": index,
            "block": "tool_result",
            "id": call_id,
            "ok": ok,
            "content": content
            if isinstance(content, str)
            else json.dumps(content, ensure_ascii=False),
        }
        if images:
            event["images"] = images
        self.out(event)
        self.out({"type": "block_stop", "index": index})
        self.results += 1
        if self.results == n:
            self.end_round()

    def end_round(self) -> None:
        """Close the round and move the base past its blocks."""
        self._close()
        self.base = self.next = self.tool_base + 2 * len(self.calls)
        self.calls = []
        self.results = 0
        self.text_started = False
        self.rounds += 1

    def close(self) -> None:
        """Stop any open block: called at every ending of a turn."""
        self._close()

    def _delta(self, kind: Literal["thinking", "text"], text: str) -> None:
        if self.open_kind != kind:
            self._close()
            self.open = self.next
            self.open_kind = kind
            self.next += 1
            self.out({"type": "block_start", "index": self.open, "block": kind})
        assert self.open is not None  # open_kind is only set with it
        self.out({"type": "block_delta", "index": self.open, "text": text})

    def _close(self) -> None:
        if self.open is not None:
            self.out({"type": "block_stop", "index": self.open})
            self.open = None
            self.open_kind = None
