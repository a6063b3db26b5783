"""Loopback HTTP servers speaking the model providers' wire formats, for tests and benchmarks.

A `WireServer` is a small HTTP/1.1 server on 127.0.0.1 (free port, TCP_NODELAY) running
its own event loop in a background thread, so the test process, a kernel subprocess or a
CLI can all talk to it. It answers each request with the next queued `Reply` and records
every request it receives. `reply(fmt, Round(...))` builds a reply in any of the four
formats ("anthropic", "openai", "responses", "ollama") from a plain description of one
model round; `Reply` methods inject faults (cut, reset, stall, bad line, split chars).

    with WireServer() as server:
        server.script("openai", Round(calls=[("read", {"path": "a"})]), Round(text="Done."))
        provider = OpenAIProvider(base_url=server.base_url("openai"), api_key="k")
        ...
        server.requests[1].body["messages"]      # what the provider sent back

Faults, for any format `fmt` (`full = reply(fmt, Round(text="Hello there"))`):

    error_reply(fmt, 429, retry_after=0)                 # then queue a good reply
    error_reply(fmt, 529) / error_reply(fmt, 401)
    full.reset_after(full.index("there"))                # TCP reset after some output
    full.close_after(len(full.chunks) - 1)               # no terminal event
    full.stall_after(full.index("there"))                # silence: read timeout
    full.insert(full.index("there"), b"data: {oops\\n\\n")  # malformed line (ollama: b"{oops\\n")
    full.insert(n, error_event(fmt)).close_after(n + 1)  # error event after HTTP 200
    full.huge_line(n, 2_000_000)                         # a 2 MB line, no newline (ollama: prefix=b"")
    full.split_chars()                                   # multi-byte chars over two writes
    full.slow(0.05)                                      # a chunk every 50 ms (interrupts)

`server.default = reply(...)` answers every request once the queue is empty (benchmarks).
For another process: `env = {**os.environ, **server.env("openai")}`. Without pytest:
`python -m tests.wire_servers openai` serves a demo round until interrupted.
"""

from __future__ import annotations

from tests.wire_servers.formats import (
    FORMATS,
    Round,
    error_event,
    error_reply,
    ndjson_line,
    reply,
    sse,
    stream_reply,
)
from tests.wire_servers.server import Reply, Request, WireServer

__all__ = [
    "FORMATS",
    "Reply",
    "Request",
    "Round",
    "WireServer",
    "error_event",
    "error_reply",
    "ndjson_line",
    "reply",
    "sse",
    "stream_reply",
]
