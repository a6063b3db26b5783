"""The messages a session sends a provider have the shapes `events.Message` types: the
providers are checked against those TypedDicts, the session's builders by this test."""

from __future__ import annotations

import asyncio
from typing import Any

from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.events import (
    AssistantMessage,
    SystemMessage,
    ThinkingBlock,
    ToolCallEntry,
    ToolMessage,
    UserMessage,
)
from tests.scripted import Scripted, call, say

SHAPES: dict[str, Any] = {
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool": ToolMessage,
}


def misfits(entry: dict[str, Any], shape: Any) -> list[str]:
    """What of `entry` the TypedDict `shape` does not allow or is missing (its
    annotations are strings: `NotRequired[...]` is read from them)."""
    keys, annotations = set(entry), shape.__annotations__
    optional = {k for k, v in annotations.items() if "NotRequired[" in str(v)}
    extra = keys - set(annotations)
    missing = set(annotations) - optional - keys
    return [f"{shape.__name__}: unknown {sorted(extra)}"] * bool(extra) + [
        f"{shape.__name__}: missing {sorted(missing)}"
    ] * bool(missing)


def problems(messages: list[dict[str, Any]]) -> list[str]:
    found = []
    for m in messages:
        found += misfits(m, SHAPES[m["role"]])
        for entry in m.get("tool_calls") or []:
            found += misfits(entry, ToolCallEntry)
        for entry in m.get("thinking") or []:
            found += misfits(entry, ThinkingBlock)
    return found


def test_what_a_session_sends_fits_the_message_types(tmp_path):
    box = Toolbox()
    box.add("look", "Look", {})(lambda args: {"seen": True})
    thinking = {"type": "thinking", "text": "hm", "metadata": {"x": {"sig": "s"}}}
    provider = Scripted(
        [thinking, *call("look", text="looking")],
        say("done"),
        say("again"),
    )
    s = Session(provider, box, workspace=tmp_path, history="full", mode="auto")
    asyncio.run(s.turn("first"))
    asyncio.run(s.turn("second"))  # the first turn comes back as history
    sent = [m for request in provider.sent for m in request["messages"]]
    assert {m["role"] for m in sent} == set(SHAPES)
    assert any(m.get("tool_calls") for m in sent) and any(m.get("thinking") for m in sent)
    assert problems(sent) == []


def test_the_check_sees_a_key_no_type_has():
    assert problems([{"role": "tool", "tool_call_id": "c", "content": "{}", "extra": 1}]) == [
        "ToolMessage: unknown ['extra']"
    ]
