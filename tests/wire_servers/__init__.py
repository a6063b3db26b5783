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
