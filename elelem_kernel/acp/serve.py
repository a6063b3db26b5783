"""Serve the ACP agent on this process's stdin and stdout, with stdout kept for protocol.

Before anything else runs, the real stdout is duplicated for the protocol and file
descriptor 1 is pointed at stderr: a `print` in a plugin, a tool's child process or a
library's warning then lands on stderr instead of corrupting the JSON-RPC stream.
Logs go to stderr too.

The agent speaks JSON-RPC itself (jsonrpc.py), without the ACP SDK and pydantic, which
took longer to import than a reply's first token. stdin is read by a thread of its own,
so it may be a pipe, a socket, a terminal or a plain file (`elelem-kernel acp <
requests.jsonl`); each line is checked (lines.py) before the connection gets it, and a
line longer than `LINE_LIMIT` is refused without being kept. stdout may be a file too.
The agent's module (sessions, tools, providers) is imported in a thread while the first
`initialize` is answered here (hello.py): a client sees the agent ready at once.

When stdin ends or the client stops reading stdout, the running turns are cancelled, the
requests already received are answered, the MCP servers stopped and the process exits:
each of those steps gets `GRACE` seconds, and a watchdog exits after `3 * GRACE` even if
a turn does not end, so an agent whose client went away is never left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import stat
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from elelem_kernel.acp.client import AcpClient
from elelem_kernel.acp.hello import Offers, initialize_result, read_offers
from elelem_kernel.acp.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, Connection, Id, id_of
from elelem_kernel.acp.lines import check, error
from elelem_kernel.acp.methods import answer
from elelem_kernel.acp.params import Params

if TYPE_CHECKING:
    from elelem_kernel.acp.agent import ElelemAgent
    from elelem_kernel.acp.messages import Json

#: Largest JSON-RPC line read (a prompt with embedded files), as the SDK's own default.
LINE_LIMIT = 50 * 1024 * 1024
CHUNK = 64 * 1024  #: bytes read from stdin at a time
GRACE = 5.0  #: seconds the turns get to end once the client has gone
log = logging.getLogger("elelem_kernel.acp")


def serve(defaults: dict[str, Any]) -> int:
    """Run until the client closes stdin; the exit code."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="elelem-acp: %(levelname)s %(message)s"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per model request is noise
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    try:
        asyncio.run(_run(defaults, protocol))
    except KeyboardInterrupt:
        return 130
    finally:
        _shutdown_mcp()
    return 0


async def _run(defaults: dict[str, Any], out_fd: int) -> None:
    loop = asyncio.get_running_loop()
    gone = asyncio.Event()
    output = await _output(out_fd, gone.set)
    front = Front(defaults)
    connection = Connection(front.handle, output.write)
    lines = output.lines = Lines(connection.receive, output, gone.set, _is_file(0))
    front.start(connection)
    threading.Thread(target=lines.read, args=(loop,), name="acp-stdin", daemon=True).start()
    await gone.wait()
    watchdog = threading.Timer(GRACE * 3, _exit_now)
    watchdog.daemon = True
    watchdog.start()
    lines.end()
    connection.disconnect()  # nothing the agent asks now can be answered
    try:
        await front.ready(GRACE)  # the requests waiting for the agent's module get it
        await front.close(GRACE)  # the turns end: their prompts are answered "cancelled"
        running = connection.running()
        if running:  # what the client asked before it left is answered, if it can be
            await asyncio.wait(running, timeout=GRACE)
        await asyncio.wait_for(connection.close(), GRACE)
    except asyncio.TimeoutError:
        log.warning("the connection did not close in %g s", GRACE)
    finally:
        watchdog.cancel()


class Front:
    """The methods' entry: `initialize` answered at once, the others by the agent once its
    module (imported in a thread) is loaded."""

    def __init__(self, defaults: dict[str, Any]):
        self.defaults = defaults
        self.offers = Offers()
        self.agent: ElelemAgent | None = None
        self.loading: asyncio.Future[ElelemAgent] | None = None

    def start(self, connection: Connection) -> None:
        self.loading = asyncio.ensure_future(self._load(connection))

    async def _load(self, connection: Connection) -> ElelemAgent:
        module = await asyncio.to_thread(importlib.import_module, "elelem_kernel.acp.agent")
        agent: ElelemAgent = module.ElelemAgent(self.defaults, AcpClient(connection))
        agent.offers = self.offers
        self.agent = agent
        return agent

    async def handle(self, method: str, params: dict[str, Json], notification: bool) -> object:
        if method == "initialize" and not notification:
            where = Params(params, "invalid params: initialize")
            version = where.integer("protocolVersion", 0, 65535)
            self.offers = read_offers(where.child("clientCapabilities"))
            if self.agent is not None:
                self.agent.offers = self.offers
            return initialize_result(version)
        assert self.loading is not None
        agent = await asyncio.shield(self.loading)
        return await answer(agent, method, params, notification)

    async def ready(self, grace: float) -> None:
        """Wait up to `grace` seconds for the agent's module to be loaded."""
        if self.loading is not None:
            await asyncio.wait([self.loading], timeout=grace)

    async def close(self, grace: float) -> None:
        """The client has gone: the running turns are cancelled, given `grace` seconds."""
        if self.agent is not None:
            await self.agent.close(grace)


class Lines:
    """stdin split into lines: good messages handed to the connection, bad ones answered
    here.

    The end of a pipe means the client has gone; the end of a file (`acp < requests.jsonl`)
    only that the requests are all there: they are handed on one at a time, each after the
    answer to the one before (a script can load a session, then prompt it), and the agent
    exits once all are answered.
    """

    def __init__(
        self,
        deliver: Callable[[dict[str, Json]], None],
        output: Output,
        gone: Callable[[], None],
        file: bool,
    ):
        self.deliver = deliver
        self.output = output
        self.gone = gone
        self.file = file
        self.buffer = bytearray()
        self.skipping = False  #: inside a line longer than LINE_LIMIT
        self.ended = False
        self.at_end = False  #: the file was read to its end
        self.unanswered: dict[Id, int] = {}  #: request ids fed from a file, not yet answered
        self.asking: set[Id] = set()  #: ids of the agent's requests to a file, unanswered
        self.queued: deque[dict[str, Json]] = deque()  #: a file's requests not yet handed on

    def read(self, loop: asyncio.AbstractEventLoop) -> None:
        """The reading thread: each chunk handed to the loop, and waited for (backpressure)."""
        while True:
            try:
                chunk = os.read(0, CHUNK)
            except OSError:
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(self.take(chunk), loop).result()
            except (RuntimeError, asyncio.CancelledError):  # the loop is gone: so is the agent
                return
            if not chunk:
                return

    async def take(self, chunk: bytes) -> None:
        if self.ended:
            return
        if not chunk:
            self.at_end = True
            self._done_when_answered()
            return
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not self.skipping and len(self.buffer) + len(piece) > LINE_LIMIT:
                self.buffer.clear()  # refused once its end comes; not kept meanwhile
                self.skipping = True
            elif not self.skipping:
                self.buffer += piece
            if end < 0:
                return
            if self.skipping:
                self.skipping = False
                limit = f"{LINE_LIMIT // (1024 * 1024)} MiB"
                self.output.put(error(None, INVALID_REQUEST, f"message longer than {limit}"))
            elif self.buffer.strip():
                self._line(bytes(self.buffer))
            self.buffer.clear()
            start = end + 1

    def _line(self, data: bytes) -> None:
        message = check(data)
        if isinstance(message, bytes):  # the error line answering it
            log.warning("%s", message.decode().strip())
            self.output.put(message)
            return
        if self.file and "method" in message:  # a response from a file is not held back
            self.queued.append(message)
            self._release()
        else:
            if self.file:
                self._track(message)
            self.deliver(message)

    def _release(self) -> None:
        """Hand on a file's requests one at a time: each waits for the answer before."""
        while self.queued and not self.unanswered:
            message = self.queued.popleft()
            self._track(message)
            self.deliver(message)

    def _track(self, message: dict[str, Json]) -> None:
        key = id_of(message)
        if "method" in message and "id" in message:
            self.unanswered[key] = self.unanswered.get(key, 0) + 1
        elif "method" not in message:
            self.asking.discard(key)

    def answered(self, data: bytes) -> None:
        """The agent wrote `data` (stdin is a file): note its answers to the file's
        requests, and its own requests, which nobody answers once the file has ended."""
        try:
            message = json.loads(data)
        except ValueError:
            return
        key = message.get("id") if isinstance(message, dict) else None
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.asking.add(key)
        elif key in self.unanswered:
            self.unanswered[key] -= 1
            if not self.unanswered[key]:
                del self.unanswered[key]
            self._release()
        self._done_when_answered()

    def _done_when_answered(self) -> None:
        if not self.at_end:
            return
        for key in sorted(self.asking, key=str):  # a permission asked of a file: refused
            refusal: dict[str, Json] = {
                "code": INTERNAL_ERROR,
                "message": "stdin was a file, and it has ended",
            }
            self.deliver({"jsonrpc": "2.0", "id": key, "error": refusal})
        self.asking.clear()
        if not self.file or not (self.unanswered or self.queued):
            self.gone()

    def end(self) -> None:
        """No more input for the connection."""
        self.ended = True


class Output:
    """stdout: lines written whole and in order, waiting while the client reads slowly;
    once it has gone they are dropped. Each line is shown to `lines` when stdin is a file,
    which needs to know when the file's requests are all answered."""

    def __init__(self, writer: asyncio.StreamWriter):
        self.writer = writer
        self.lines: Lines | None = None
        self._lock = asyncio.Lock()

    def put(self, data: bytes) -> None:
        """Write `data` now, without waiting for the client to read it."""
        if self.writer.transport.is_closing():
            return
        self.writer.write(data)
        if self.lines is not None and self.lines.file:
            self.lines.answered(data)

    async def write(self, data: bytes) -> None:
        async with self._lock:
            self.put(data)
            with contextlib.suppress(ConnectionError):  # the client has gone: `gone` is set
                await self.writer.drain()


class _Pipe(asyncio.streams.FlowControlMixin):
    """The protocol of stdout's pipe: tells when the client stops reading."""

    def __init__(self, lost: Callable[[], None]):
        super().__init__()
        self.lost = lost

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lost()


class FileTransport(asyncio.WriteTransport):
    """stdout as a plain file (`> out.jsonl`): written through, never waits."""

    def __init__(self, fd: int):
        super().__init__()
        self.fd = fd
        self.closed = False

    def write(self, data: Any) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


async def _output(fd: int, lost: Callable[[], None]) -> Output:
    """stdout: through the event loop's pipe transport unless it is a file."""
    loop = asyncio.get_running_loop()
    if _is_file(fd):
        protocol = asyncio.streams.FlowControlMixin()
        return Output(asyncio.StreamWriter(FileTransport(fd), protocol, None, loop))
    pipe = os.fdopen(fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(lambda: _Pipe(lost), pipe)
    return Output(asyncio.StreamWriter(transport, protocol, None, loop))


def _is_file(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def _exit_now() -> None:
    """The turns did not end after the client left: stop the servers and exit anyway."""
    log.warning("the turns did not end in time after the client went away: exiting")
    with contextlib.suppress(Exception):
        _shutdown_mcp()
    os._exit(1)


def _shutdown_mcp() -> None:
    """Stop the MCP servers this process started (the client's and the person's)."""
    if "elelem_kernel.mcp.hub" in sys.modules:
        from elelem_kernel.mcp.hub import shutdown  # loaded already: a session started servers

        shutdown()
