"""Serve the ACP agent on this process's stdin and stdout, with stdout kept for protocol.

Before anything else runs, the real stdout is duplicated for the protocol and file
descriptor 1 is pointed at stderr: a `print` in a plugin, a tool's child process or a
library's warning then lands on stderr instead of corrupting the JSON-RPC stream.
Logs go to stderr too.

stdin is read by a thread of its own, so it may be a pipe, a socket, a terminal or a
plain file (`elelem-kernel acp < requests.jsonl`); each line is checked (lines.py) before
the SDK gets it. stdout may be a file too. The SDK takes over a second to import, so it is
imported in a thread (lean: sdk.py) while the first `initialize` is answered here
(hello.py): a client sees the agent ready at once. When stdin ends or the client stops reading
stdout, the running turns are cancelled, the MCP servers stopped and the process exits,
after at most `GRACE` seconds even if a turn does not end: an agent whose client went
away is never left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from elelem_kernel.acp.hello import early_initialize, initialize_result
from elelem_kernel.acp.lines import INVALID_REQUEST, check, error
from elelem_kernel.acp.sdk import import_lean

if TYPE_CHECKING:
    from elelem_kernel.acp.agent import ElelemAgent

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
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    gone = asyncio.Event()
    lines = Lines(reader, gone.set, stat.S_ISREG(os.fstat(0).st_mode))
    writer = lines.writer = await _writer(out_fd, gone.set, lines)
    threading.Thread(target=lines.read, args=(loop,), name="acp-stdin", daemon=True).start()
    agent = await _agent(defaults, lines)
    from acp import run_agent  # imported already, with the agent

    sdk = loop.create_task(run_agent(agent, writer, reader))  # type: ignore[arg-type]
    ended = loop.create_task(gone.wait())
    await asyncio.wait({sdk, ended}, return_when=asyncio.FIRST_COMPLETED)
    ended.cancel()
    watchdog = threading.Timer(GRACE * 2, _exit_now)
    watchdog.daemon = True
    watchdog.start()
    lines.end()
    try:
        await agent.close(GRACE)
        await asyncio.wait_for(sdk, GRACE)
    except asyncio.TimeoutError:
        log.warning("the connection did not close in %g s", GRACE)
    finally:
        watchdog.cancel()


async def _agent(defaults: dict[str, Any], lines: Lines) -> ElelemAgent:
    """The agent, its module and the SDK imported in a thread; the client's `initialize`,
    if `lines` answered it meanwhile, passed on to it."""
    module = await asyncio.to_thread(import_lean, "elelem_kernel.acp.agent")
    agent: ElelemAgent = module.ElelemAgent(defaults)
    lines.early = False  # from now on the SDK answers
    if lines.hello is not None:
        agent.remember_client(lines.hello)
    return agent


class Lines:
    """stdin split into lines: good messages fed to the SDK, bad ones answered here.

    The end of a pipe means the client has gone; the end of a file (`acp < requests.jsonl`)
    only that the requests are all there: they are given to the SDK one at a time, each
    after the answer to the one before (a script can load a session, then prompt it),
    and the agent exits once all are answered.
    """

    def __init__(self, reader: asyncio.StreamReader, gone: Callable[[], None], file: bool):
        self.reader = reader
        self.writer: Any = None
        self.gone = gone
        self.file = file
        self.buffer = bytearray()
        self.skipping = False  #: inside a line longer than LINE_LIMIT
        self.ended = False
        self.at_end = False  #: the file was read to its end
        self.unanswered: dict[Any, int] = {}  #: request ids fed from a file, not yet answered
        self.early = True  #: the SDK is not loaded yet: `initialize` is answered here
        self.hello: dict[str, Any] | None = None  #: the `initialize` params answered here
        self.asking: set[Any] = set()  #: ids of the agent's requests to a file, unanswered
        self.queued: deque[bytes] = deque()  #: a file's lines not yet given to the SDK

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
        self.buffer += chunk
        while True:
            end = self.buffer.find(b"\n")
            if end < 0:
                break
            line = bytes(self.buffer[: end + 1])
            del self.buffer[: end + 1]
            if self.skipping:
                self.skipping = False
                self.writer.write(error(None, INVALID_REQUEST, "message longer than 50 MiB"))
            elif line.strip():
                self._line(line)
        if len(self.buffer) > LINE_LIMIT:
            self.buffer.clear()
            self.skipping = True

    def _line(self, line: bytes) -> None:
        answer = check(line)
        if answer is not None:
            log.warning("%s", answer.decode().strip())
            self.writer.write(answer)
            return
        if self.early and self.hello is None and b'"initialize"' in line:
            answer = self._hello(json.loads(line))
            if answer is not None:
                self.writer.write(answer)
                return
        if self.file and b'"method"' in line:  # a response from a file is not held back
            self.queued.append(line)
            self._release()
        else:
            if self.file:
                self._track(line)
            self.reader.feed_data(line)

    def _release(self) -> None:
        """Feed a file's lines one request at a time: each waits for the answer before."""
        while self.queued and not self.unanswered:
            line = self.queued.popleft()
            self._track(line)
            self.reader.feed_data(line)

    def _hello(self, message: dict[str, Any]) -> bytes | None:
        """The answer to the client's first `initialize`, when it can be given here."""
        version = early_initialize(message)
        if version is None:
            return None
        self.hello = message["params"]
        result = {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(version)}
        return (json.dumps(result, separators=(",", ":")) + "\n").encode()

    def _track(self, line: bytes) -> None:
        message = json.loads(line)
        if "method" in message and "id" in message:
            key = message["id"]
            self.unanswered[key] = self.unanswered.get(key, 0) + 1
        elif "method" not in message:
            self.asking.discard(message.get("id"))

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
            self.reader.feed_data(error(key, -32603, "stdin was a file, and it has ended"))
        self.asking.clear()
        if not self.file or not (self.unanswered or self.queued):
            self.gone()

    def end(self) -> None:
        """No more input for the SDK."""
        if not self.ended:
            self.ended = True
            self.reader.feed_eof()


class _Output(asyncio.streams.FlowControlMixin):
    """The protocol of stdout's pipe: tells when the client stops reading."""

    def __init__(self, lost: Callable[[], None]):
        super().__init__()
        self.lost = lost

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lost()


class Writer(asyncio.StreamWriter):
    """stdout for the SDK and for `Lines`; each line written is shown to `lines`, which
    needs to know when the requests of a file are all answered."""

    def __init__(self, transport: Any, protocol: Any, lines: Lines):
        super().__init__(transport, protocol, None, asyncio.get_running_loop())
        self.lines = lines

    def write(self, data: Any) -> None:
        super().write(data)
        if self.lines.file:
            self.lines.answered(bytes(data))


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


async def _writer(fd: int, lost: Callable[[], None], lines: Lines) -> Writer:
    """A writer for stdout: through the event loop's pipe transport unless it is a file."""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return Writer(FileTransport(fd), asyncio.streams.FlowControlMixin(), lines)
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(lambda: _Output(lost), pipe)
    return Writer(transport, protocol, lines)


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
