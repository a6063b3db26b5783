"""The bounded SSE reader gives what httpx_sse gives, over real HTTP, however the bytes are cut."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from httpx_sse import EventSource

from elelem_kernel.errors import TooLarge
from elelem_kernel.providers.stream import DEFAULT_LIMIT, events
from tests.wire_servers import Reply, WireServer

SSE = {"content-type": "text/event-stream; charset=utf-8"}
STREAM = (
    b'data: {"a": 1}\n\n'
    b'event: message_start\ndata: {"b": "\xc3\xa9t\xc3\xa9"}\n\n'
    b": a comment\n\n"
    b"data: two\ndata: lines\n\n"
    b"id: 7\nretry: 10\n\n"
    b"event: ping\n\n"
    b"data:no space\r\n\r\n"
    b"data: cr only\r\rdata: crlf\r\n\r\n"
    b"\n\n\ndata: after blank lines\n\n"
    b"data: [DONE]\n\n"
    b"data: unfinished at the end"
)


def cuts(data: bytes) -> dict[str, list[bytes]]:
    """The stream as one write, byte by byte, and cut inside CRLFs and characters."""
    at_cr = [i + 1 for i, b in enumerate(data) if b == 13]
    pieces, last = [], 0
    for i in at_cr:
        pieces.append(data[last:i])
        last = i
    pieces.append(data[last:])
    return {
        "whole": [data],
        "bytes": [data[i : i + 1] for i in range(len(data))],
        "after each CR": pieces,
        "mid-character": [data[: data.index(b"\xc3") + 1], data[data.index(b"\xc3") + 1 :]],
    }


async def both(url: str) -> tuple[list, list]:
    async with httpx.AsyncClient() as client:
        async with client.stream("POST", url, json={}) as response:
            ours = [e async for e in events(response.aiter_bytes(), DEFAULT_LIMIT)]
        async with client.stream("POST", url, json={}) as response:
            theirs = [(e.event, e.data) async for e in EventSource(response).aiter_sse()]
    return ours, theirs


@pytest.mark.parametrize("how", list(cuts(STREAM)))
def test_events_match_httpx_sse(how):
    chunks = cuts(STREAM)[how]
    with WireServer() as server:
        server.queue(Reply(headers=SSE, chunks=chunks), Reply(headers=SSE, chunks=chunks))
        ours, theirs = asyncio.run(both(server.url + "/v1/chat/completions"))
    with_data = [e for e in theirs if e[1]]
    assert [e for e in ours if e[1]] == with_data
    assert ("message_start", '{"b": "été"}') in ours
    assert ("message", "two\nlines") in ours and ("message", "cr only") in ours
    assert ours[-1] == ("message", "[DONE]")  # the unfinished event is dropped


def test_a_blank_line_split_across_reads_and_a_growing_event_are_bounded():
    async def go(chunks, limit):
        async def source():
            for chunk in chunks:
                yield chunk

        return [e async for e in events(source(), limit)]

    assert asyncio.run(go([b"data: a\n", b"\ndata: b\r", b"\n\r\n"], 100)) == [
        ("message", "a"),
        ("message", "b"),
    ]
    with pytest.raises(TooLarge) as line:
        asyncio.run(go([b"data: " + b"x" * 60, b"x" * 60], 100))
    assert line.value.what == "line"
    with pytest.raises(TooLarge) as event:
        asyncio.run(go([b"data: " + b"x" * 40 + b"\n"] * 3, 100))
    assert event.value.what == "event"
