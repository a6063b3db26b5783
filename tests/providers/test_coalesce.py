"""One text event per network read (providers/coalesce.py): pieces a read delivered
together are joined, nothing waits for a read that has not come, and every other event,
and the order of all, is what the stream said. Over real loopback HTTP, per wire format."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import pytest

from elelem_kernel.errors import TooLarge
from elelem_kernel.providers import stream
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
    """`r` with its whole body in one network write (a server ahead of its client)."""
    return dataclasses.replace(r, chunks=[b"".join(r.chunks)])


# -- the join itself -------------------------------------------------------------------------


def test_consecutive_pieces_of_one_kind_are_handed_on_joined_at_flush():
    out: list[dict] = []
    joined = Coalescing(out.append)
    for piece in ("a", "b", "c"):
        joined({"type": "saying", "text": piece})
    assert out == []
    joined.flush()
    assert out == [{"type": "saying", "text": "abc"}]


def test_any_other_event_hands_on_the_held_pieces_first_and_keeps_its_place():
    out: list[dict] = []
    joined = Coalescing(out.append)
    signed = {"type": "thinking", "text": "", "metadata": {"anthropic": {"signature": "s"}}}
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
    assert out == [
        {"type": "thinking", "text": "xy"},
        signed,
        {"type": "thinking", "text": "z"},
        {"type": "saying", "text": "12"},
        {"type": "usage", "input": 1, "output": 2},
        {"type": "saying", "text": "3"},
    ]


def test_a_lone_piece_is_handed_on_as_it_came_and_flush_twice_is_harmless():
    out: list[dict] = []
    joined = Coalescing(out.append)
    piece = {"type": "saying", "text": "only"}
    joined(piece)
    joined.flush()
    joined.flush()
    assert len(out) == 1 and out[0] is piece


# -- the reads -------------------------------------------------------------------------------


def test_a_read_of_several_events_is_one_batch_and_events_still_come_one_by_one():
    reads = [b"data: a\n\ndata: b\n\ndata: c", b"\n\ndata: d\n\n"]

    async def chunks():
        for chunk in reads:
            yield chunk

    async def go():
        batches = [b async for b in stream.event_batches(chunks(), 1000)]
        single = [e async for e in stream.events(chunks(), 1000)]
        return batches, single

    batches, single = asyncio.run(go())
    assert [[data for _, data in b] for b in batches] == [["a", "b"], ["c", "d"]]
    assert [data for _, data in single] == ["a", "b", "c", "d"]


@pytest.mark.parametrize("framing", ["sse", "ndjson"])
def test_what_a_read_completed_before_a_line_over_the_limit_is_handed_on_first(framing):
    if framing == "sse":
        read, batches = b"data: a\n\ndata: " + b"x" * 200, stream.event_batches
    else:
        read, batches = b'{"a": 1}\n' + b"x" * 200, stream.line_batches

    async def chunks():
        yield read

    got: list[list[object]] = []

    async def go():
        async for batch in batches(chunks(), 100):
            got.append(batch)

    with pytest.raises(TooLarge):
        asyncio.run(go())
    assert len(got) == 1 and len(got[0]) == 1


# -- over loopback HTTP ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_reply_in_one_network_write_is_a_few_text_events_saying_the_same(wire, make, fmt):
    wire.script(fmt, LONG)
    normal = fetch(make(fmt))
    wire.queue(_one_write(reply(fmt, LONG)))
    got = fetch(make(fmt))
    assert got.error is None and normal.error is None
    # one read (two, should the write be split): one text event, not one a word
    assert len(got.of("saying")) <= 2 < WORDS <= len(normal.of("saying"))
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
