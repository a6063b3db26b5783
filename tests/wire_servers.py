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

import argparse
import asyncio
import collections
import dataclasses
import http
import json
import re
import socket
import struct
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("anthropic", "openai", "responses", "ollama")
_BASE_PATHS = {"anthropic": "", "openai": "/v1", "responses": "/v1", "ollama": ""}
_ENV = {
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "responses": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "ollama": ("OLLAMA_HOST", None),
}
_SSE = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
_NDJSON = {"content-type": "application/x-ndjson"}


# -- what the server receives and sends ---------------------------------------------------


@dataclass
class Request:
    """One request the server received; `body` is the parsed JSON (None if not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


@dataclass
class Reply:
    """One scripted answer: status, headers, and the body as a list of network writes.

    `stream` replies go out chunked, one write per chunk, `delay` seconds before each;
    `end` says what happens after the last chunk: "close" (end the body properly),
    "reset" (TCP reset, mid-stream) or "stall" (send nothing more, hold the connection).
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    delay: float = 0.0
    end: str = "close"
    stream: bool = True

    def index(self, marker: str) -> int:
        """Position of the first chunk containing `marker` (for cutting or inserting)."""
        for i, chunk in enumerate(self.chunks):
            if marker.encode() in chunk:
                return i
        raise ValueError(f"no chunk contains {marker!r}")

    def cut(self, n: int, end: str = "close") -> Reply:
        """The first `n` chunks only, then `end`."""
        return dataclasses.replace(self, chunks=self.chunks[:n], end=end)

    def close_after(self, n: int) -> Reply:
        """A stream that ends cleanly after `n` chunks, without its terminal event."""
        return self.cut(n, "close")

    def reset_after(self, n: int) -> Reply:
        """A connection reset after `n` chunks."""
        return self.cut(n, "reset")

    def stall_after(self, n: int) -> Reply:
        """A stream that goes silent after `n` chunks (for read timeouts)."""
        return self.cut(n, "stall")

    def insert(self, n: int, chunk: bytes | str) -> Reply:
        """`chunk` written before chunk `n` (a malformed line, an error event...)."""
        data = chunk.encode() if isinstance(chunk, str) else chunk
        return dataclasses.replace(self, chunks=[*self.chunks[:n], data, *self.chunks[n:]])

    def slow(self, delay: float) -> Reply:
        """Every chunk `delay` seconds after the previous one (for interrupt tests)."""
        return dataclasses.replace(self, delay=delay)

    def split_chars(self) -> Reply:
        """Every chunk holding a multi-byte character split inside it, over two writes."""
        chunks: list[bytes] = []
        for chunk in self.chunks:
            at = next((i for i, b in enumerate(chunk) if b >= 0xC0), None)
            if at is None:
                chunks.append(chunk)
            else:
                chunks += [chunk[: at + 1], chunk[at + 1 :]]
        return dataclasses.replace(self, chunks=chunks, delay=max(self.delay, 0.01))


# -- rounds in each format ---------------------------------------------------------------


@dataclass
class Round:
    """One model round, in neutral terms; `reply(fmt, round)` renders it in a format.

    `calls` holds `(name, arguments)` or `(name, arguments, id)`; `usage` uses the
    provider event keys (input, output, cache_read, cache_write); `stop` is the raw wire
    stop reason (default: the format's tool or end reason).
    """

    text: str = ""
    thinking: str = ""
    calls: Sequence[tuple] = ()
    usage: Mapping[str, int] | None = None
    stop: str | None = None
    signature: str = "c2lnbmF0dXJlLTE="
    redacted: str | None = None
    encrypted: str = "ZW5jcnlwdGVkLTE="
    reasoning_field: str = "reasoning_content"
    ids: bool = True

    def usage_or_default(self) -> dict[str, int]:
        return {"input": 12, "output": 7, "cache_read": 0, "cache_write": 0, **(self.usage or {})}

    def call_list(self, prefix: str) -> list[tuple[str, dict, str]]:
        return [
            (c[0], c[1], c[2] if len(c) > 2 else f"{prefix}{i + 1}")
            for i, c in enumerate(self.calls)
        ]


def reply(fmt: str, round: Round) -> Reply:
    """`round` as a streamed reply in wire format `fmt`."""
    builders = {
        "anthropic": _anthropic,
        "openai": _openai,
        "responses": _responses,
        "ollama": _ollama,
    }
    if fmt not in builders:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    return builders[fmt](round)


def error_reply(
    fmt: str,
    status: int,
    message: str = "scripted failure",
    *,
    retry_after: float | str | None = None,
    kind: str | None = None,
) -> Reply:
    """An HTTP error answer with the format's error body (and `retry-after` if given)."""
    kind = kind or _ANTHROPIC_KINDS.get(status, "api_error")
    if fmt == "anthropic":
        body: Any = {"type": "error", "error": {"type": kind, "message": message}}
    elif fmt == "ollama":
        body = {"error": message}
    else:
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    headers = {"content-type": "application/json"}
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    return Reply(status, headers, [json.dumps(body).encode()], stream=False)


def error_event(fmt: str, message: str = "Overloaded", kind: str = "overloaded_error") -> bytes:
    """An error sent inside a stream that started with HTTP 200."""
    if fmt == "anthropic":
        return _event("error", {"type": "error", "error": {"type": kind, "message": message}})
    if fmt == "openai":
        return _data({"error": {"message": message, "type": kind, "code": None}})
    if fmt == "responses":
        return _event("error", {"type": "error", "code": kind, "message": message, "param": None})
    return _line({"error": message})


_ANTHROPIC_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _pieces(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def _halves(arguments: dict) -> list[str]:
    if not arguments:
        return []
    raw = json.dumps(arguments, ensure_ascii=False)
    return [raw[: len(raw) // 2], raw[len(raw) // 2 :]]


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {_json(data)}\n\n".encode()


def _data(data: Any) -> bytes:
    return f"data: {_json(data)}\n\n".encode()


def _line(data: Any) -> bytes:
    return (_json(data) + "\n").encode()


def _anthropic(r: Round) -> Reply:
    u = r.usage_or_default()
    out: list[bytes] = []
    fresh = u["input"] - u["cache_read"] - u["cache_write"]
    usage = {
        "input_tokens": fresh,
        "cache_read_input_tokens": u["cache_read"],
        "cache_creation_input_tokens": u["cache_write"],
        "output_tokens": 1,
    }
    message = {
        "id": "msg_wire",
        "type": "message",
        "role": "assistant",
        "model": "wire",
        "content": [],
        "stop_reason": None,
        "usage": usage,
    }
    out.append(_event("message_start", {"type": "message_start", "message": message}))
    out.append(_event("ping", {"type": "ping"}))
    blocks: list[tuple[dict, list[dict]]] = []
    if r.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(r.thinking)]
        deltas.append({"type": "signature_delta", "signature": r.signature})
        blocks.append(({"type": "thinking", "thinking": ""}, deltas))
    if r.redacted is not None:
        blocks.append(({"type": "redacted_thinking", "data": r.redacted}, []))
    if r.text:
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(r.text)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for name, arguments, call_id in r.call_list("toolu_"):
        parts = _halves(arguments) or [""]
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in parts]
        blocks.append(({"type": "tool_use", "id": call_id, "name": name, "input": {}}, deltas))
    for i, (start, deltas) in enumerate(blocks):
        out.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            )
        )
        for delta in deltas:
            out.append(
                _event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": delta},
                )
            )
        out.append(_event("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = r.stop or ("tool_use" if r.calls else "end_turn")
    out.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": u["output"]},
            },
        )
    )
    out.append(_event("message_stop", {"type": "message_stop"}))
    return Reply(headers=dict(_SSE), chunks=out)


def _openai(r: Round) -> Reply:
    u = r.usage_or_default()
    base = {"id": "chatcmpl-wire", "object": "chat.completion.chunk", "created": 0, "model": "wire"}
    out: list[bytes] = []

    def add(delta: dict, finish: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        out.append(_data({**base, "choices": [choice]}))

    add({"role": "assistant", "content": ""})
    for p in _pieces(r.thinking):
        add({r.reasoning_field: p})
    for p in _pieces(r.text):
        add({"content": p})
    calls = r.call_list("call_")
    for i, (name, _, call_id) in enumerate(calls):
        head: dict[str, Any] = {
            "index": i,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        if r.ids:
            head["id"] = call_id
        add({"tool_calls": [head]})
    halves = [_halves(arguments) for _, arguments, _ in calls]
    for part in range(2):
        for i, parts in enumerate(halves):
            if parts:
                add({"tool_calls": [{"index": i, "function": {"arguments": parts[part]}}]})
    add({}, r.stop or ("tool_calls" if calls else "stop"))
    usage = {
        "prompt_tokens": u["input"],
        "completion_tokens": u["output"],
        "total_tokens": u["input"] + u["output"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read"]},
    }
    out.append(_data({**base, "choices": [], "usage": usage}))
    out.append(b"data: [DONE]\n\n")
    return Reply(headers=dict(_SSE), chunks=out)


def _responses(r: Round) -> Reply:
    u = r.usage_or_default()
    out: list[bytes] = []
    seq = 0

    def add(kind: str, **data: Any) -> None:
        nonlocal seq
        out.append(_event(kind, {"type": kind, "sequence_number": seq, **data}))
        seq += 1

    response: dict[str, Any] = {
        "id": "resp_wire",
        "object": "response",
        "status": "in_progress",
        "model": "wire",
        "output": [],
    }
    add("response.created", response=response)
    items: list[dict] = []
    if r.thinking:
        item = {"id": "rs_wire", "type": "reasoning", "summary": []}
        add("response.output_item.added", output_index=len(items), item=item)
        for p in _pieces(r.thinking):
            add(
                "response.reasoning_summary_text.delta",
                item_id="rs_wire",
                output_index=len(items),
                summary_index=0,
                delta=p,
            )
        done = {
            **item,
            "summary": [{"type": "summary_text", "text": r.thinking}],
            "encrypted_content": r.encrypted,
        }
        add("response.output_item.done", output_index=len(items), item=done)
        items.append(done)
    if r.text:
        item = {
            "id": "msg_wire",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        add("response.output_item.added", output_index=len(items), item=item)
        for p in _pieces(r.text):
            add(
                "response.output_text.delta",
                item_id="msg_wire",
                output_index=len(items),
                content_index=0,
                delta=p,
            )
        done = {
            **item,
            "status": "completed",
            "content": [{"type": "output_text", "text": r.text, "annotations": []}],
        }
        add("response.output_item.done", output_index=len(items), item=done)
        items.append(done)
    for i, (name, arguments, call_id) in enumerate(r.call_list("call_")):
        item = {
            "id": f"fc_wire{i + 1}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        add("response.output_item.added", output_index=len(items), item=item)
        for p in _halves(arguments):
            add(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=len(items),
                delta=p,
            )
        raw = json.dumps(arguments, ensure_ascii=False) if arguments else ""
        done = {**item, "status": "completed", "arguments": raw}
        add("response.output_item.done", output_index=len(items), item=done)
        items.append(done)
    usage = {
        "input_tokens": u["input"],
        "input_tokens_details": {"cached_tokens": u["cache_read"]},
        "output_tokens": u["output"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u["input"] + u["output"],
    }
    final = {**response, "output": items, "usage": usage}
    if r.stop in (None, "completed"):
        add("response.completed", response={**final, "status": "completed"})
    elif r.stop == "failed":
        error = {"code": "server_error", "message": "scripted failure"}
        add("response.failed", response={**final, "status": "failed", "error": error})
    else:
        add(
            "response.incomplete",
            response={**final, "status": "incomplete", "incomplete_details": {"reason": r.stop}},
        )
    return Reply(headers=dict(_SSE), chunks=out)


def _ollama(r: Round) -> Reply:
    u = r.usage_or_default()
    base = {"model": "wire", "created_at": "2026-01-01T00:00:00Z"}
    out: list[bytes] = []

    def add(message: dict, **extra: Any) -> None:
        out.append(
            _line(
                {
                    **base,
                    "message": {"role": "assistant", "content": "", **message},
                    "done": False,
                    **extra,
                }
            )
        )

    for p in _pieces(r.thinking):
        add({"thinking": p})
    for p in _pieces(r.text):
        add({"content": p})
    calls = []
    for i, (name, arguments, call_id) in enumerate(r.call_list("call_")):
        call: dict[str, Any] = {"function": {"index": i, "name": name, "arguments": arguments}}
        if r.ids:
            call["id"] = call_id
        calls.append(call)
    if calls:
        add({"tool_calls": calls})
    add(
        {},
        done=True,
        done_reason=r.stop or "stop",
        total_duration=1000,
        prompt_eval_count=u["input"],
        eval_count=u["output"],
    )
    return Reply(headers=dict(_NDJSON), chunks=out)


# -- the server --------------------------------------------------------------------------


class WireServer:
    """HTTP/1.1 on 127.0.0.1 in a background thread, answering from a queue of replies.

    When the queue is empty it answers with `default` if set, else a 400 that says so.
    GET requests (health checks such as Ollama's `/api/version`) get a small JSON answer
    without using the queue.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.host = host
        self.port = port
        self.requests: list[Request] = []
        self.default: Reply | None = None
        self._replies: collections.deque[Reply] = collections.deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopping: asyncio.Event | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, once started."""
        return f"http://{self.host}:{self.port}"

    def base_url(self, fmt: str) -> str:
        """The base URL a provider of format `fmt` expects (OpenAI's includes `/v1`)."""
        return self.url + _BASE_PATHS[fmt]

    def env(self, fmt: str, key: str = "test-key") -> dict[str, str]:
        """Environment variables pointing a provider (in any process) at this server."""
        base_var, key_var = _ENV[fmt]
        env = {base_var: self.base_url(fmt)}
        if key_var:
            env[key_var] = key
        return env

    def queue(self, *replies: Reply) -> WireServer:
        """Answer the next requests with `replies`, in order."""
        self._replies.extend(replies)
        return self

    def script(self, fmt: str, *rounds: Round) -> WireServer:
        """Queue one reply per round, in format `fmt`."""
        return self.queue(*(reply(fmt, r) for r in rounds))

    def pending(self) -> int:
        """How many queued replies have not been used yet."""
        return len(self._replies)

    def start(self) -> WireServer:
        """Start serving in a daemon thread; returns once the port is bound."""
        self._thread = threading.Thread(target=self._run, name="wire-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise RuntimeError(f"wire server failed to start: {self._error}")
        return self

    def stop(self) -> None:
        """Stop serving and drop every open connection."""
        if self._loop is not None and self._stopping is not None and self._thread:
            self._loop.call_soon_threadsafe(self._stopping.set)
            self._thread.join(10)
        self._loop = None

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as e:  # reported to start() instead of dying silently
            self._error = e
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._connection, self.host, self.port)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stopping.wait()
            for writer in list(self._writers):
                writer.transport.abort()
            server.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._writers.add(writer)
        try:
            while await self._exchange(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        first, *lines = head.split("\r\n")
        method, path, _ = first.split(" ", 2)
        headers = {}
        for line in lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        raw = await reader.readexactly(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.requests.append(Request(method, path, headers, body, raw))
        return await self._send(self._next(method, path), reader, writer)

    def _next(self, method: str, path: str) -> Reply:
        if method == "GET":
            body = json.dumps({"version": "0.0.0-wire", "models": []}).encode()
            return Reply(200, {"content-type": "application/json"}, [body], stream=False)
        if self._replies:
            return self._replies.popleft()
        if self.default is not None:
            return self.default
        message = f"wire server: no scripted reply left for {method} {path}"
        body = json.dumps(
            {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        ).encode()
        return Reply(400, {"content-type": "application/json"}, [body], stream=False)

    async def _send(
        self, r: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        try:
            phrase = http.HTTPStatus(r.status).phrase
        except ValueError:
            phrase = "Overloaded" if r.status == 529 else "Status"
        head = [f"HTTP/1.1 {r.status} {phrase}"]
        head += [f"{k}: {v}" for k, v in r.headers.items()]
        if r.stream:
            head.append("transfer-encoding: chunked")
        else:
            head.append(f"content-length: {sum(len(c) for c in r.chunks)}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for chunk in r.chunks:
            if r.delay:
                await asyncio.sleep(r.delay)
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if r.stream else chunk)
            await writer.drain()
        if r.end == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if r.end == "stall":
            assert self._stopping is not None
            gone = asyncio.ensure_future(reader.read(1))
            stop = asyncio.ensure_future(self._stopping.wait())
            await asyncio.wait({gone, stop}, return_when=asyncio.FIRST_COMPLETED)
            gone.cancel()
            stop.cancel()
            return False
        if r.stream:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        return True


def main(argv: Sequence[str] | None = None) -> None:
    """Serve a demo round in one format until interrupted; print the URL and env."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("format", choices=FORMATS)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="Hello from the wire server.")
    args = parser.parse_args(argv)
    server = WireServer(port=args.port)
    server.default = reply(args.format, Round(text=args.text))
    with server:
        print(server.url, json.dumps(server.env(args.format)), flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
