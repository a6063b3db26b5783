"""One MCP server's connection: started, listed, called and stopped on the hub's loop.

The transport and client session are async context managers that must be entered and
left by the same task, so each connection is one long-lived task (`serve`) that holds
them open until asked to stop; calls from other tasks use the session it published.
A stdio server's stderr goes to a private, bounded, redacted log (`stderr_log`), whose
last lines explain a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.mcp.config import ServerConfig
from elelem_kernel.mcp.stderr_log import StderrLog, tail
from elelem_kernel.redaction import forms_of, redact

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp.types import Tool as RemoteTool

INIT_TIMEOUT = 10.0  #: seconds for a server to start and answer `initialize`
MAX_TOOLS = 500  #: tools kept per server
MAX_PAGES = 20
STDERR_LINES = 8  #: lines of a server's stderr quoted when it fails

#: the process ids a link's stdio transport spawned (set per serving task)
_spawned: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "elelem_mcp_spawned", default=None
)


class Link:
    """The state of one server: `stopped`, `starting`, `running`, `failed`, `crashed`."""

    def __init__(self, config: ServerConfig, log: Path):
        self.config = config
        self.log = log
        self.state = "stopped"
        self.why: str | None = None
        self.tools: list[RemoteTool] = []  #: as the server listed them
        self.stale = False  #: the server said its tool list changed
        self.reported = False  #: the current failure was shown once already
        self.session: ClientSession | None = None  #: the SDK's, while running
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    async def start(self, init_timeout: float = INIT_TIMEOUT) -> None:
        """Start the server and wait until its tools are listed or it failed."""
        self.state, self.why, self.reported, self.tools = "starting", None, False, []
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready, init_timeout))
        await asyncio.shield(ready)

    async def stop(self) -> None:
        """Stop the server (its process tree with a stdio one) and wait until it is gone."""
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await self._task
        self._task = self.session = None
        if self.state in ("running", "starting"):
            self.state = "stopped"

    def crashed(self, why: str) -> None:
        """Mark a server that broke mid-session; the next turn restarts it."""
        self.state, self.why, self.reported = "crashed", why, True
        if self._stop is not None:
            self._stop.set()

    async def relist(self) -> None:
        """Fetch the tool list again (after `notifications/tools/list_changed`)."""
        self.stale = False
        if self.session is not None:
            self.tools = await asyncio.wait_for(_list_tools(self.session), INIT_TIMEOUT)

    def stderr_tail(self, lines: int = STDERR_LINES) -> str:
        """The last lines the server wrote to stderr ('' when none)."""
        return "\n".join(line[:300] for line in tail(self.log, lines) if line.strip())

    def failure(self) -> str:
        """Why the server is not usable, with its stderr tail, for the turn's output."""
        text = f"MCP server {self.name!r} {'crashed' if self.state == 'crashed' else 'failed'}: {self.why}"
        tail = self.stderr_tail()
        if tail:
            text += f"\nlast lines of its stderr ({self.log}):\n{tail}"
        return str(redact(text, forms_of(self.config.secrets)))

    async def _serve(self, ready: asyncio.Future[None], init_timeout: float) -> None:
        spawned: list[int] = []
        _spawned.set(spawned)
        log: StderrLog | None = None
        try:
            if self.config.transport == "stdio":
                log = StderrLog(self.log, self.config.secrets)
            async with contextlib.AsyncExitStack() as stack:
                errlog = log.writer if log is not None else None
                read, write = await stack.enter_async_context(self._transport(errlog))
                from mcp.client.session import ClientSession

                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=self._on_message)
                )
                try:
                    await asyncio.wait_for(session.initialize(), init_timeout)
                    self.tools = await asyncio.wait_for(_list_tools(session), init_timeout)
                except (asyncio.TimeoutError, TimeoutError):
                    raise TimeoutError(
                        f"no answer to initialize within {init_timeout:g} s"
                    ) from None
                self.session, self.state = session, "running"
                if not ready.done():
                    ready.set_result(None)
                assert self._stop is not None
                await self._stop.wait()
        except BaseException as error:
            if self.state in ("starting", "running"):
                self.state = "failed" if self.state == "starting" else "crashed"
                self.why = describe(error, self.config)
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self.session = None
            await _kill_groups(spawned)
            if log is not None:
                await asyncio.to_thread(log.close)
            if not ready.done():
                ready.set_result(None)

    def _transport(self, errlog: Any) -> Any:
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            _record_spawns()

            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) or None,
                cwd=config.cwd,
                encoding_error_handler="replace",
            )
            return stdio_client(params, errlog=errlog)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=dict(config.headers) or None)
        return _http(config)

    async def _on_message(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.stale = True


@contextlib.asynccontextmanager
async def _http(config: ServerConfig) -> Any:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=dict(config.headers) or None) as client:
        async with streamable_http_client(config.url, http_client=client) as streams:
            yield streams


async def _list_tools(session: ClientSession) -> list[RemoteTool]:
    from mcp.types import PaginatedRequestParams

    tools: list[RemoteTool] = []
    cursor = None
    for _ in range(MAX_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await session.list_tools(params=params)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor or len(tools) >= MAX_TOOLS:
            break
    return tools[:MAX_TOOLS]


def _record_spawns() -> None:
    """Note the pid of each stdio server the SDK starts, for `_kill_groups`.

    The SDK starts a server in a process group of its own, but after a graceful exit it
    stops only the server, so children it left behind would outlive the session. The SDK
    does not expose the process, hence the wrapper around its spawn function (kept only
    while that private function exists, which `mcp>=2.3,<3` has).
    """
    import mcp.client.stdio as stdio

    spawn = getattr(stdio, "_create_platform_compatible_process", None)
    if spawn is None or getattr(spawn, "elelem_records", False):
        return

    async def recording(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        pids = _spawned.get()
        if pids is not None and getattr(process, "pid", None):
            pids.append(process.pid)
        return process

    recording.elelem_records = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = recording


async def _kill_groups(pids: list[int]) -> None:
    """Stop what is left of each server's process group: TERM, then KILL."""
    if not pids or not hasattr(os, "killpg"):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = False
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, sig)
                alive = True
        if not alive:
            return
        await asyncio.sleep(0.2)


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or the error itself."""
    inner = getattr(error, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for e in inner for leaf in leaves(e)]
    return [error]


def describe(error: BaseException, config: ServerConfig) -> str:
    """A one-line reason for a failure, with no env or header values in it."""
    found = [e for e in leaves(error) if not isinstance(e, asyncio.CancelledError)]
    error = found[0] if found else error
    if isinstance(error, FileNotFoundError) and config.cwd and not Path(config.cwd).is_dir():
        text = f"its folder (cwd) does not exist: {config.cwd}"
    elif isinstance(error, FileNotFoundError) and config.transport == "stdio":
        text = f"command not found: {config.command}"
    elif isinstance(error, PermissionError) and config.transport == "stdio":
        text = f"cannot run {config.command}: permission denied"
    elif isinstance(error, asyncio.CancelledError):
        text = "stopped while starting"
    elif type(error).__name__ == "MCPError" and getattr(error, "code", None) == -32000:
        text = "it closed the connection (the process ended or dropped stdio)"
    else:
        text = str(error) or type(error).__name__
        if type(error).__name__ not in text and not isinstance(error, TimeoutError):
            text = f"{type(error).__name__}: {text}"
    text = str(redact(text, forms_of(config.secrets)))
    return " ".join(text.split())[:500]
