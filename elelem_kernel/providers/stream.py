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

#: Largest line, event or body accepted when a provider does not say otherwise.
DEFAULT_LIMIT = 16_000_000
#: Most bytes one decompression step may produce (a compressed read can expand 1000-fold).
STEP = 65_536
#: Content encodings `decoded` reads, besides none.
ENCODINGS = frozenset({"gzip", "x-gzip", "deflate"})

_BREAKS = {True: re.compile(rb"\r\n|\r|\n"), False: re.compile(rb"\n")}


class TooLarge(Exception):
    """A line, event or body passed the limit; `what` names which ("line", "event")."""

    def __init__(self, what: str, limit: int):
        super().__init__(f"{what} over {limit} bytes")
        self.what = what
        self.limit = limit


class Undecodable(Exception):
    """The body came in a content encoding that is not read, or does not decompress."""

    def __init__(self, encoding: str, reason: str = ""):
        super().__init__(encoding)
        self.encoding = encoding
        self.reason = reason


def problem(error: TooLarge | Undecodable, name: str) -> str:
    """What went wrong, for a person, with the provider's `name` and what to change."""
    if isinstance(error, TooLarge):
        article = "an" if error.what == "event" else "a"
        return (
            f"{name} sent {article} {error.what} over the {_size(error.limit)} limit (the "
            "max_event_bytes option); stopped reading: this is not a model reply"
        )
    if error.reason:
        return f"{name} sent a {error.encoding} body that does not decompress ({error.reason})"
    return (
        f"{name} sent its answer in the {error.encoding} encoding, which is not read "
        "(identity was asked for; gzip and deflate are read too)"
    )


async def decoded(chunks: AsyncIterable[bytes], encoding: str) -> AsyncGenerator[bytes, None]:
    """The raw body `chunks` decompressed per `encoding`, at most `STEP` bytes at a time.

    httpx would inflate each network read whole before anyone could look at it; here a
    line that passes its limit is stopped after a few steps. Requests ask for `identity`,
    so honest servers send plain bytes; gzip and deflate are read too, anything else is
    `Undecodable`.
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        async for chunk in chunks:
            yield chunk
        return
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
    """Server-sent events as `(event name, data)`; an event's data is at most about `limit`.

    Follows the HTML event-stream rules: `data` lines join with `\\n`, a blank line ends
    the event, `:` lines are comments, events without data are skipped, an event the
    stream ends inside is dropped. The name defaults to "message".
    """
    name = ""
    data: list[str] = []
    size = 0
    async for line in lines(chunks, limit):
        if not line:
            if data:
                yield name or "message", "\n".join(data)
            name, data, size = "", [], 0
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            size += len(value) + 1
            if size > limit:
                raise TooLarge("event", limit)
            data.append(value)


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


def _size(limit: int) -> str:
    """`limit` bytes for people: "16 MB", "1.5 MB", "800 bytes"."""
    if limit >= 1_000_000:
        return f"{limit / 1_000_000:g} MB"
    return f"{limit / 1_000:g} KB" if limit >= 1_000 else f"{limit} bytes"
