"""The bounded readers of providers/stream.py: line ends, event rules, limits."""

from __future__ import annotations

import asyncio

import pytest

from elelem_kernel.errors import TooLarge, Undecodable
from elelem_kernel.providers import stream


async def _chunks(parts: list[bytes]):
    for part in parts:
        yield part


def _lines(parts: list[bytes], limit: int = 100, sse: bool = True) -> list[str]:
    async def go() -> list[str]:
        return [line async for line in stream.lines(_chunks(parts), limit, sse=sse)]

    return asyncio.run(go())


def _events(parts: list[bytes], limit: int = 100) -> list[tuple[str, str]]:
    async def go() -> list[tuple[str, str]]:
        return [event async for event in stream.events(_chunks(parts), limit)]

    return asyncio.run(go())


def test_sse_lines_end_in_crlf_cr_or_lf_even_split_across_writes():
    assert _lines([b"a\r", b"\nb\rc\n", b"d"]) == ["a", "b", "c", "d"]


def test_ndjson_lines_end_in_lf_only():
    assert _lines([b'{"a":\r1}\n{"b"', b":2}\n"], sse=False) == ['{"a":\r1}', '{"b":2}']


def test_a_character_split_across_writes_arrives_whole():
    data = "é€".encode()
    assert _lines([data[:1], data[1:4], data[4:] + b"\n"]) == ["é€"]


def test_events_follow_the_event_stream_rules():
    parts = [b": comment\nevent: delta\ndata: one\ndata:two\n\n", b"data: [DONE]\n\n"]
    parts += [b"event: ping\n\n", b"data: cut off"]
    assert _events(parts) == [("delta", "one\ntwo"), ("message", "[DONE]")]


def test_a_read_per_event_gives_the_events_of_the_whole_stream():
    """Reads of exactly one `data:` event (the usual case, taken whole) and reads cut
    anywhere give the same events as the stream in one read."""
    events = [b'data: {"a": 1}\n\n', b"data: \n\n", b"data: two\ndata: lines\n\n"]
    events += [b"event: named\ndata: x\n\n", b"data: crlf\r\n\r\n", "data: é\n\n".encode()]
    events += [b"data: no\nblank", b"\n\n", b"data: [DONE]\n\n", b"data: end"]
    whole = _events([b"".join(events)])
    assert whole[0] == ("message", '{"a": 1}') and ("message", "é") in whole
    assert _events(events) == whole
    data = b"".join(events)
    for cut in range(1, len(data)):
        assert _events([data[:cut], data[cut:]]) == whole, cut


def test_a_read_of_one_event_over_the_limit_is_refused():
    with pytest.raises(TooLarge) as error:
        _events([b"data: " + b"y" * 100 + b"\n\n"])
    assert (error.value.what, error.value.limit) == ("event", 100)
    assert _events([b"data: " + b"y" * 94 + b"\n\n"]) == [("message", "y" * 94)]


def test_a_line_over_the_limit_is_refused_before_it_ends():
    with pytest.raises(TooLarge) as error:
        _lines([b"x" * 60, b"x" * 60])
    assert (error.value.what, error.value.limit) == ("line", 100)


def test_an_event_over_the_limit_is_refused():
    with pytest.raises(TooLarge) as error:
        _events([b"data: " + b"y" * 40 + b"\n"] * 3)
    assert error.value.what == "event"


def test_read_keeps_the_first_bytes_of_a_long_body():
    async def go(parts: list[bytes]) -> tuple[bytes, bool]:
        return await stream.read(_chunks(parts), 5)

    assert asyncio.run(go([b"abc", b"defg", b"h"])) == (b"abcde", True)
    assert asyncio.run(go([b"abc", b"de"])) == (b"abcde", False)


def test_decoded_inflates_in_bounded_steps():
    import gzip
    import zlib

    data = b"x" * 1_000_000 + b"\n"

    async def go(parts: list[bytes], encoding: str) -> list[bytes]:
        return [out async for out in stream.decoded(_chunks(parts), encoding)]

    for encoding, packed in (("gzip", gzip.compress(data)), ("deflate", zlib.compress(data))):
        out = asyncio.run(go([packed], encoding))
        assert b"".join(out) == data and max(map(len, out)) <= stream.STEP
    assert asyncio.run(go([b"plain"], "identity")) == [b"plain"]
    with pytest.raises(Undecodable):
        asyncio.run(go([b"x"], "zstd"))
