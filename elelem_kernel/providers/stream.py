"""Bounded reading of what a provider's server sends: lines, server-sent events, bodies.

A server (or anything posing as one) decides how long a line is. Reading "up to the next
newline" without a bound lets one endless line take all the memory, so every reader here
holds at most `limit` bytes of one line, one event or one body, and raises `TooLarge`
past it. The stream as a whole is not bounded: its lines are handed on one by one.

Lines are split on bytes before decoding (UTF-8 never puts `\\n` or `\\r` inside a
character), so a character split across network writes arrives whole.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator

from elelem_kernel.errors import TooLarge, Undecodable
from elelem_kernel.text import human_size

#: Largest line, event or body accepted when a provider does not say otherwise.
DEFAULT_LIMIT = 16_000_000
#: Most bytes one decompression step may produce (a compressed read can expand 1000-fold).
STEP = 65_536
#: Content encodings `decoded` reads, besides none.
ENCODINGS = frozenset({"gzip", "x-gzip", "deflate"})

_BREAKS = {True: re.compile(rb"\r\n|\r|\n"), False: re.compile(rb"\n")}


def problem(error: TooLarge | Undecodable, name: str) -> str:
    """What went wrong, for a person, with the provider's `name` and what to change."""
    if isinstance(error, TooLarge):
        article = "an" if error.what == "event" else "a"
        limit = human_size(error.limit, "limit")
        return (
            f"{name} sent {article} {error.what} over the {limit} limit (the "
            "max_event_bytes option); stopped reading: this is not a model reply"
        )
    if error.reason:
        return f"{name} sent a {error.encoding} body that does not decompress ({error.reason})"
    return (
        f"{name} sent its answer in the {error.encoding} encoding, which is not read "
        "(identity was asked for; gzip and deflate are read too)"
    )


def decoded(chunks: AsyncGenerator[bytes, None], encoding: str) -> AsyncGenerator[bytes, None]:
    """The raw body `chunks` decompressed per `encoding`, at most `STEP` bytes at a time.

    httpx would inflate each network read whole before anyone could look at it; here a
    line that passes its limit is stopped after a few steps. Requests ask for `identity`,
    so honest servers send plain bytes: those are `chunks` themselves (a generator passing
    them on would add a step to every read, one per event of a streamed reply); gzip and
    deflate are read too, anything else is `Undecodable` (at the first read).
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return chunks
    return _inflated(chunks, encoding)


async def _inflated(chunks: AsyncIterable[bytes], encoding: str) -> AsyncGenerator[bytes, None]:
    """`chunks` in `encoding` (gzip or deflate), inflated at most `STEP` bytes at a time."""
    if encoding not in ENCODINGS:
        raise Undecodable(encoding)
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or zlib header
    try:
        async for chunk in chunks:
            data = chunk
            while data:
                out = inflater.decompress(data, STEP)
                if out:
                    yield out
                data = inflater.unconsumed_tail
        rest = inflater.flush()
    except zlib.error as e:
        raise Undecodable(encoding, str(e)) from None
    if rest:
        yield rest


async def lines(
    chunks: AsyncIterable[bytes], limit: int, *, sse: bool = True
) -> AsyncIterator[str]:
    """The lines of a byte stream, without their line ends, each at most `limit` bytes.

    SSE ends lines with `\\r\\n`, `\\r` or `\\n`; NDJSON (`sse=False`) with `\\n` only.
    A last line without a line end is yielded too.
    """
    buffer = bytearray()
    carriage = False  # the previous chunk ended in `\r`: a `\n` opening this one belongs to it
    breaks = _BREAKS[sse]
    async for chunk in chunks:
        if carriage and chunk[:1] == b"\n":
            chunk = chunk[1:]
        carriage = False
        start = 0
        for match in breaks.finditer(chunk):
            buffer += chunk[start : match.start()]
            _check(buffer, limit, "line")
            yield buffer.decode("utf-8", "replace")
            buffer.clear()
            start = match.end()
        buffer += chunk[start:]
        _check(buffer, limit, "line")
        if sse and chunk.endswith(b"\r"):
            carriage = True
    if buffer:
        yield buffer.decode("utf-8", "replace")


async def events(chunks: AsyncIterable[bytes], limit: int) -> AsyncIterator[tuple[str, str]]:
    """Server-sent events as `(event name, data)`; an event holds at most `limit` bytes.

    Follows the HTML event-stream rules: `data` lines join with `\\n`, a blank line ends
    the event, `:` lines are comments, events without data are skipped, an event the
    stream ends inside is dropped. The name defaults to "message".

    A model sends one small event per token, so each network read is cut at blank lines
    in one call and only whole events are decoded (line-by-line parsing cost a third of a
    turn); a read that is exactly one `data:` line and its blank line, as most are, is
    decoded as it is. What waits for its blank line is bounded: past `limit` it is
    `TooLarge`, named a "line" when its last line alone is that long, else an "event".
    """
    pending = bytearray()
    held_cr = False  # a CR that ended the last read: it may pair with an LF opening this one
    async for chunk in chunks:
        if held_cr:
            chunk, held_cr = b"\r" + chunk, False
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                chunk, held_cr = chunk[:-1], True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if (  # one whole event of one `data:` line: its first line end opens the blank line
            not pending
            and chunk.startswith(b"data: ")
            and chunk.find(b"\n") == len(chunk) - 2
            and chunk.endswith(b"\n\n")
            and len(chunk) - 2 <= limit
        ):
            yield "message", chunk[6:-2].decode("utf-8", "replace")
            continue
        search = max(len(pending) - 1, 0)  # a blank line may straddle the reads
        pending += chunk
        done = 0
        while (at := pending.find(b"\n\n", search)) >= 0:
            event = _event(bytes(pending[done:at]), limit)
            if event is not None:
                yield event
            done = search = at + 2
        del pending[:done]
        if len(pending) > limit:
            last = len(pending) - 1 - pending.rfind(b"\n")
            raise TooLarge("line" if last > limit else "event", limit)


def _event(block: bytes, limit: int) -> tuple[str, str] | None:
    """The name and data of the event whose lines are `block`; None when it has no data."""
    if len(block) > limit:
        raise TooLarge("event", limit)
    if block.startswith(b"data: ") and b"\n" not in block:  # the usual one-line event
        return "message", block[6:].decode("utf-8", "replace")
    name, data = b"", []
    for line in block.split(b"\n"):
        if not line or line.startswith(b":"):
            continue
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            name = value
    if not data:
        return None
    return name.decode("utf-8", "replace") or "message", b"\n".join(data).decode("utf-8", "replace")


async def read(chunks: AsyncIterable[bytes], limit: int) -> tuple[bytes, bool]:
    """A whole body, or its first `limit` bytes: `(bytes, True when the rest was left)`."""
    body = bytearray()
    async for chunk in chunks:
        room = limit - len(body)
        body += chunk[:room]
        if len(chunk) > room:
            return bytes(body), True
    return bytes(body), False


def _check(buffer: bytearray, limit: int, what: str) -> None:
    if len(buffer) > limit:
        raise TooLarge(what, limit)
