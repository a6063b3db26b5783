"""One text event per network read (providers/coalesce.py): pieces a read delivered
together are joined, nothing waits for a read that has not come, and every other event,
and the order of all, is what the stream said. Over real loopback HTTP, per wire format."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import pytest

from elelem_kernel.providers.coalesce import Coalescing
from tests.providers.conftest import fetch
from tests.wire_servers import FORMATS, Reply, Round, error_event, reply

WORDS = 60
LONG = Round(
    thinking=" ".join(["plan"] * WORDS),
    text=" ".join(["word"] * WORDS),
    calls=[("read", {"path": "a.py"}), ("read", {"path": "b.py"})],
)


def _one_write(r: Reply) -> Reply:
    """`r`, each event still its own HTTP chunk, all in one network write (a server ahead
    of its client: httpx hands on the chunks one at a time, without a wait between)."""
    return dataclasses.replace(r, burst=True)


# -- the join itself -------------------------------------------------------------------------


def _on_a_loop(steps):
    """Run `steps(joined, out)` (a coroutine function) on a fresh loop; `out` afterwards."""
    out: list[dict] = []

    async def go():
        await steps(Coalescing(out.append), out)

    asyncio.run(go())
    return out


def test_pieces_are_held_until_the_task_waits_then_handed_on_joined():
    seen: list[list[dict]] = []

    async def steps(joined, out):
        for piece in ("a", "b", "c"):
            joined({"type": "saying", "text": piece})
        seen.append(list(out))  # nothing yet: the task has not waited
        await asyncio.sleep(0)  # as a network read does
        seen.append(list(out))
        joined({"type": "saying", "text": "d"})
        joined.flush()  # the stream's end, or an error leaving
        seen.append(list(out))
        await asyncio.sleep(0)  # the hand-on already scheduled finds nothing

    out = _on_a_loop(steps)
    abc = {"type": "saying", "text": "abc"}
    assert seen == [[], [abc], [abc, {"type": "saying", "text": "d"}]]
    assert out == seen[-1]


def test_any_other_event_hands_on_the_held_pieces_first_and_keeps_its_place():
    signed = {"type": "thinking", "text": "", "metadata": {"anthropic": {"signature": "s"}}}

    async def steps(joined, out):
        for event in (
            {"type": "thinking", "text": "x"},
            {"type": "thinking", "text": "y"},
            signed,
            {"type": "thinking", "text": "z"},
            {"type": "saying", "text": "1"},
            {"type": "saying", "text": "2"},
            {"type": "usage", "input": 1, "output": 2},
            {"type": "saying", "text": "3"},
        ):
            joined(event)
        joined.flush()

    assert _on_a_loop(steps) == [
        {"type": "thinking", "text": "xy"},
        signed,
        {"type": "thinking", "text": "z"},
        {"type": "saying", "text": "12"},
        {"type": "usage", "input": 1, "output": 2},
        {"type": "saying", "text": "3"},
    ]


def test_a_lone_piece_is_handed_on_as_it_came():
    piece = {"type": "saying", "text": "only"}

    async def steps(joined, out):
        joined(piece)
        await asyncio.sleep(0)

    out = _on_a_loop(steps)
    assert len(out) == 1 and out[0] is piece


def test_what_the_receiver_raised_in_a_scheduled_hand_on_is_raised_in_the_task():
    def broken(event):
        raise ValueError("renderer broke")

    async def go():
        joined = Coalescing(broken)
        joined({"type": "saying", "text": "a"})
        await asyncio.sleep(0)  # the hand-on runs here, outside the task
        with pytest.raises(ValueError, match="renderer broke"):
            joined.flush()

    asyncio.run(go())


# -- over loopback HTTP ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_reply_in_one_network_write_is_a_few_text_events_saying_the_same(wire, make, fmt):
    wire.script(fmt, LONG)
    normal = fetch(make(fmt))
    wire.queue(_one_write(reply(fmt, LONG)))
    got = fetch(make(fmt))
    assert got.error is None and normal.error is None
    # one read (two, should the write be split): one text event, not one a word
    assert len(got.of("saying")) <= 2 < WORDS
    assert got.text == LONG.text and got.thinking == normal.thinking
    assert got.joined() == normal.joined()  # calls, usage, stop: the same, in the same order
    rest = [e for e in got.events if e["type"] not in ("saying", "thinking")]
    assert rest == [e for e in normal.events if e["type"] not in ("saying", "thinking")]
    assert got.assistant() == normal.assistant()


@pytest.mark.parametrize("fmt", FORMATS)
def test_nothing_waits_for_the_next_read_and_a_stop_mid_stream_stops(wire, make, fmt):
    full = reply(fmt, Round(text="Hello there, world."))
    sent = full.index("there")
    wire.queue(full.stall_after(sent + 1))  # "Hello there," then silence
    provider = make(fmt, read_timeout=30)
    events: list[dict] = []

    async def go() -> float:
        task = asyncio.ensure_future(
            provider.fetch([{"role": "user", "content": "hi"}], [], events.append)
        )
        deadline = time.monotonic() + 10
        while "".join(e.get("text", "") for e in events) != "Hello there, ":
            assert time.monotonic() < deadline, events
            await asyncio.sleep(0.01)
        asked = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await provider.aclose()
        return time.monotonic() - asked

    assert asyncio.run(go()) < 2
    assert all(e["type"] in ("saying", "thinking") for e in events)


@pytest.mark.parametrize("fmt", FORMATS)
def test_text_a_read_brought_before_an_error_is_handed_on_and_not_retried(wire, make, fmt):
    full = reply(fmt, Round(text="Hello there, world."))
    cut = full.index("world")
    broken = full.insert(cut, error_event(fmt, "Overloaded")).close_after(cut + 1)
    wire.queue(_one_write(broken), full)
    got = fetch(make(fmt))
    assert got.error is not None and "Overloaded" in str(got.error)
    assert got.text == "Hello there, " and len(wire.requests) == 1
