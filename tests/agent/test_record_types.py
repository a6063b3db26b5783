"""The TypedDicts of the turn record, the provider events and the block events agree with
what is written down (record.schema.json) and with what the code emits, so neither drifts."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from typing import Any, ForwardRef, get_args

import pytest

from elelem_kernel import events, images
from elelem_kernel.agent import blocks, record
from elelem_kernel.providers.stub import StubProvider
from elelem_kernel.tools import extras

SCHEMA = json.loads(
    resources.files("elelem_kernel.store").joinpath("record.schema.json").read_text("utf-8")
)


def keys(typed: Any) -> tuple[set[str], set[str]]:
    """(every key, the required keys) of a TypedDict. The modules import NotRequired for
    annotations only, so it is read from the annotation's text."""
    every, required = set(), set()
    for name, hint in typed.__annotations__.items():
        text = hint.__forward_arg__ if isinstance(hint, ForwardRef) else str(hint)
        every.add(name)
        if name in typed.__required_keys__ and not text.startswith("NotRequired["):
            required.add(name)
    return every, required


@pytest.mark.parametrize(
    ("typed", "part"),
    [
        (record.TurnRecord, SCHEMA),
        (record.RecordRound, SCHEMA["$defs"]["round"]),
        (record.RecordCall, SCHEMA["$defs"]["call"]),
        (events.Usage, SCHEMA["$defs"]["usage"]),
        (record.Meter, SCHEMA["$defs"]["context"]),
        (record.BudgetEntry, SCHEMA["$defs"]["budget"]),
        (record.CompactionEntry, SCHEMA["$defs"]["compaction"]),
        (extras.Change, SCHEMA["properties"]["changes"]["items"]),
        (images.ImageEntry, SCHEMA["$defs"]["image"]),
    ],
    ids=["record", "round", "call", "usage", "context", "budget", "compaction", "change", "image"],
)
def test_record_types_name_the_schema_properties(typed: Any, part: dict[str, Any]) -> None:
    every, required = keys(typed)
    assert every == set(part["properties"]), f"{typed.__name__} and record.schema.json differ"
    assert set(part.get("required", ())) <= required  # what the schema requires is never optional


def conforms(event: dict[str, Any], union: Any) -> bool:
    """Whether `event` has the keys of the union's member named by its `type`."""
    for typed in get_args(union):
        every, required = keys(typed)
        if typed.__annotations__["type"].__forward_arg__ == f"Literal[{event.get('type')!r}]":
            return required <= set(event) <= every
    return False


def test_a_recorded_turn_has_the_record_types_keys() -> None:
    recorder = record.TurnRecorder(conversation="c", prompt="p", provider="stub", model=None)
    recorder.start_round()
    recorder.event({"type": "doing", "id": "1", "name": "read", "arguments": {}})
    recorder.result("1", {"ok": True}, 3, images=[{"mime_type": "image/png", "data": ""}])
    made = recorder.finish("error", "it broke")
    every, required = keys(record.TurnRecord)
    assert required <= set(made) <= every
    round_every, _ = keys(record.RecordRound)
    call_every, call_required = keys(record.RecordCall)
    assert set(made["rounds"][0]) == round_every
    assert call_required <= set(made["rounds"][0]["calls"][0]) <= call_every


def test_provider_and_block_events_have_their_types_keys() -> None:
    seen: list[dict[str, Any]] = []
    shown: list[dict[str, Any]] = []
    layout = blocks.BlockLayout(shown.append)
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    for messages in ([{"role": "user", "content": "hi"}], [{"role": "tool", "content": "{}"}]):
        asyncio.run(StubProvider().fetch(messages, tools, seen.append))
    for event in seen:
        layout.event(event)
    layout.tool_result("stub_1", True, {"ok": True}, images=[{"mime_type": "image/png"}])
    layout.close()
    assert {e["type"] for e in seen} == {"saying", "thinking", "doing", "usage", "stop"}
    assert {e["block"] for e in shown if e["type"] == "block_start"} == {
        "thinking",
        "text",
        "tool_use",
        "tool_result",
    }
    assert [e for e in seen if not conforms(e, events.ProviderEvent)] == []
    assert [e for e in shown if not conforms(e, blocks.BlockEvent)] == []
    assert not conforms({"type": "block_stop"}, blocks.BlockEvent)  # index is required
    assert not conforms({"type": "saying", "text": "", "extra": 1}, events.ProviderEvent)
