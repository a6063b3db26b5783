"""What a turn record kept in a notebook is: its versions, its size limit, its keys
(`TurnRecord`), its JSON Schema.

The agent writes records in this format (agent/record.py) and the store reads them back
(store/rebuild.py); both take the facts from here, so a reader never knows more versions
than the writer. The schema is `record.schema.json`, next to this module.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, TypedDict

from elelem_kernel.events import Usage
from elelem_kernel.images import ImageEntry

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired

    from elelem_kernel.tools.extras import Change

#: Record format version this code writes (and store/rebuild.py reads).
VERSION = 1
#: Records above this (estimated serialized size) are skipped, not restored. The session
#: cuts every record it makes to fit (`agent.record.fit`), so only foreign or edited records
#: hit it.
MAX_RECORD_BYTES = 4_000_000
#: Records that carry a compaction are version 2 (older readers skip them, saying so).
COMPACTION_VERSION = 2
#: Newest version written, and every version restored (older ones are migrated on read).
NEWEST = COMPACTION_VERSION
VERSIONS = (VERSION, COMPACTION_VERSION)


class Meter(TypedDict, total=False):
    """How full the context window was at a request (`$defs/context`)."""

    used: int
    window: int
    estimated: bool
    assumed: bool
    refused: bool


class BudgetEntry(TypedDict):
    """A budget in force for a turn and what its scope had spent (`$defs/budget`)."""

    amount: float
    unit: str
    per: str
    spent: float
    cell: NotRequired[bool]


class CompactionEntry(TypedDict):
    """The record's `compaction` (`$defs/compaction`)."""

    upto: str
    turns: int
    summary: str
    before: int
    after: int
    failed: NotRequired[str]
    focus: NotRequired[str]


class RecordCall(TypedDict):
    """One tool call in a round of the record (`$defs/call` in record.schema.json)."""

    id: str | None
    name: str | None  #: None only when a provider sent a call without one
    arguments: object  #: an object, or cut JSON text (`bounded_arguments`)
    result: str | None  #: what the model saw, cut; None until the call has a result
    ok: bool | None
    ms: int
    images: NotRequired[list[ImageEntry]]


class RecordRound(TypedDict):
    """One model call of the turn (`$defs/round`)."""

    thinking: str
    text: str
    calls: list[RecordCall]


class TurnRecord(TypedDict):
    """The turn record as this code writes it; its keys are record.schema.json's
    properties (tests/agent/test_record_types.py keeps the two in step); the agent writes
    it (agent/record.py), the store reads it back."""

    v: int
    conversation: str
    turn: str
    cell: str | None
    provider: str
    model: str | None
    served_model: NotRequired[str]
    prompt: str
    prompt_images: NotRequired[list[ImageEntry]]
    reply: str
    rounds: list[RecordRound]
    usage: Usage  #: every key of `Usage`
    stop: str | None
    started: str
    ms: int
    error: NotRequired[str | None]
    cost: NotRequired[float | None]
    priced_by: NotRequired[str]
    usage_estimated: NotRequired[bool]
    findings: NotRequired[list[dict[str, object]]]  #: review/report.py checks them
    notices: NotRequired[list[str]]
    context: NotRequired[Meter]
    calibration: NotRequired[float]
    budget: NotRequired[list[BudgetEntry]]
    compaction: NotRequired[CompactionEntry]
    undone: NotRequired[bool]
    changes: NotRequired[list[Change]]
    review: NotRequired[dict[str, object]]
    signature: NotRequired[str]


@cache
def schema() -> dict[str, object]:
    """The record's JSON Schema (draft 2020-12), `record.schema.json`."""
    from importlib import resources  # only a restore needs it: a CLI turn stays lean

    text = resources.files("elelem_kernel.store").joinpath("record.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def larger_than(value: object, limit: int) -> bool:
    """Whether the estimated JSON size of `value` passes `limit` (stops as soon as it does)."""
    size = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2
            for key, inner in item.items():
                size += len(str(key)) + 4
                stack.append(inner)
        elif isinstance(item, (list, tuple)):
            size += 2
            stack.extend(item)
        else:
            size += 8
        if size > limit:
            return True
    return False
