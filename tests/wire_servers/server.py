"""The loopback HTTP/1.1 server: a queue of scripted replies, a record of requests."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import http
import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

_BASE_PATHS = {"anthropic": "", "openai": "/v1", "responses": "/v1", "ollama": ""}
_ENV = {
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "responses": ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "ollama": ("OLLAMA_HOST", None),
}


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
    `burst` sends all the chunks in one network write (a server far ahead of its client).
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    delay: float = 0.0
    end: str = "close"
    stream: bool = True
    burst: bool = False

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

    def huge_line(self, n: int, size: int, prefix: bytes = b"data: ") -> Reply:
        """Before chunk `n`, a line of `size` bytes that never ends (no newline), in 64 KB
        writes: `prefix` then `x`s. The stream goes on afterwards as scripted."""
        filler = [b"x" * min(65_536, size - at) for at in range(0, size, 65_536)]
        line = [prefix, *filler] if prefix else filler  # an empty chunk would end the body
        return dataclasses.replace(self, chunks=[*self.chunks[:n], *line, *self.chunks[n:]])

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


class WireServer:
    """HTTP/1.1 on 127.0.0.1 in a background thread, answering from a queue of replies.

    When the queue is empty it answers with `default` if set, else a 400 that says so.
    Model-info requests never use the queue and are recorded in `info_requests`, not
    `requests` (which holds what the model was asked): a path in `info` (llama.cpp's
    `/v1/models` and `/props`, `local_servers.py`) is answered with its JSON (or the `Reply`
    it maps to), any method; Ollama's `POST /api/show` elsewhere gets a 404 as for an
    unknown model; other GET requests (health checks such as Ollama's `/api/version`) get
    a small JSON answer.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.host = host
        self.port = port
        self.requests: list[Request] = []
        self.info_requests: list[Request] = []
        self.default: Reply | None = None
        self.info: dict[str, Any] = {}
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

    def script(self, fmt: str, *rounds: Any) -> WireServer:
        """Queue one reply per `Round`, in format `fmt`."""
        from tests.wire_servers.formats import reply

        return self.queue(*(reply(fmt, r) for r in rounds))

    def clear(self) -> WireServer:
        """Forget the replies still queued (a failed test must not answer the next one)."""
        self._replies.clear()
        return self

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
            # Let connections accepted just now get their transports and handlers first (a
            # few loop turns): one accepted after close() would never be closed.
            for _ in range(8):
                await asyncio.sleep(0)
            server.close()
            for writer in list(self._writers):
                writer.transport.abort()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._writers.add(writer)
        try:
            while await self._exchange(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # a client went away, or the server stops while a connection idles
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
        request = Request(method, path, headers, body, raw)
        info = method == "GET" or path in self.info or path == "/api/show"
        (self.info_requests if info else self.requests).append(request)
        return await self._send(self._next(method, path), reader, writer)

    def _next(self, method: str, path: str) -> Reply:
        if path in self.info:
            answer = self.info[path]
            if isinstance(answer, Reply):
                return answer
            body = json.dumps(answer).encode()
            return Reply(200, {"content-type": "application/json"}, [body], stream=False)
        if path == "/api/show":
            body = json.dumps({"error": "model not found"}).encode()
            return Reply(404, {"content-type": "application/json"}, [body], stream=False)
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
        framed = [b"%x\r\n%s\r\n" % (len(c), c) if r.stream else c for c in r.chunks]
        for chunk in [b"".join(framed)] if r.burst else framed:
            if r.delay:
                await asyncio.sleep(r.delay)
            writer.write(chunk)
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
