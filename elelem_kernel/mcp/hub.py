"""The hub: every MCP server of the process, on one background event loop.

Servers must outlive a turn, and the fronts run turns on different loops (a private loop
per CLI turn, a kernel's long-lived turn thread), so the client sessions live on a loop of
their own in a daemon thread (a `sync.LoopThread`). Turns reach it with `run`, which hands
a coroutine over and cancels it there when the turn is interrupted. `close` (at exit, and at kernel shutdown)
stops every server and its process tree, so none outlives the session.

Servers' stderr logs go to a private folder (`0700`) made for the session and removed by
`close`, unless the person asked to keep them: `ELELEM_MCP_LOGS=DIR` (or `logs=`) names a
folder that is kept.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from elelem_kernel.mcp.config import ServerConfig
from elelem_kernel.mcp.connection import INIT_TIMEOUT, Link, describe
from elelem_kernel.sync import LoopThread

if TYPE_CHECKING:
    from mcp.types import CallToolResult

T = TypeVar("T")
LOGS_ENV = "ELELEM_MCP_LOGS"  #: a folder for the servers' stderr logs, kept after the session
CLOSE_TIMEOUT = 15.0  #: seconds `close` waits for every server to stop


class Hub:
    """Servers by name, started lazily, kept up, restarted after a crash."""

    def __init__(self, logs: Path | None = None, init_timeout: float = INIT_TIMEOUT):
        self.links: dict[str, Link] = {}
        self.init_timeout = init_timeout
        chosen = logs or (Path(os.environ[LOGS_ENV]) if os.environ.get(LOGS_ENV) else None)
        self.keep_logs = chosen is not None  #: the person named the folder: it stays
        self._logs = chosen
        self._loop = LoopThread("elelem-mcp")

    @property
    def logs(self) -> Path:
        """The log folder, made on first use: private (`0700`) whoever made it."""
        if self._logs is None:
            self._logs = Path(tempfile.mkdtemp(prefix="elelem-mcp-"))
        self._logs.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._logs.chmod(0o700)
        return self._logs

    def remove_logs(self) -> None:
        """Remove the session's log folder, unless the person asked to keep it."""
        if not self.keep_logs and self._logs is not None:
            shutil.rmtree(self._logs, ignore_errors=True)
            self._logs = None

    # -- the loop ---------------------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coro` on the hub's loop; its future."""
        return self._loop.submit(coro)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the hub's loop from any other loop; cancelling cancels it there."""
        return await self._loop.run_from_loop(coro)

    def wait(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the hub's loop from synchronous code and wait for it."""
        return self._loop.wait(coro, timeout)

    # -- servers ----------------------------------------------------------------------

    async def sync(
        self, configs: dict[str, ServerConfig], lazy: frozenset[str] = frozenset()
    ) -> list[str]:
        """Bring the servers in line with `configs`; notices of new failures, once each.

        Changed or removed servers stop; servers not running start, in parallel, except
        disabled, untrusted and ones that failed to start (they wait for `restart`), and
        the `lazy` ones that never ran: their tools are known, they start when called.
        """
        stale = [link for name, link in self.links.items() if configs.get(name) != link.config]
        await asyncio.gather(*(link.stop() for link in stale))
        for link in stale:
            del self.links[link.name]
        for name, config in configs.items():
            if name not in self.links:
                self.links[name] = Link(config, self.logs / f"{name}.log")
        starting = [
            link
            for link in self.links.values()
            if not link.config.disabled
            and not link.config.skipped
            and link.state in ("stopped", "crashed")
            and not (link.state == "stopped" and link.name in lazy)
        ]
        await asyncio.gather(*(self._start_link(link) for link in starting))
        await asyncio.gather(*(self._relist(link) for link in self.links.values() if link.stale))
        notices = []
        for link in self.links.values():
            if link.state in ("failed", "crashed") and not link.reported:
                link.reported = True
                notices.append(link.failure())
        return notices

    async def _start_link(self, link: Link) -> None:
        await link.stop()
        await link.start(self.init_timeout)

    async def _relist(self, link: Link) -> None:
        try:
            await link.relist()
        except Exception as e:
            link.crashed(f"listing its tools again failed: {describe(e, link.config)}")
            link.reported = False

    async def ensure(self, name: str) -> Link | None:
        """Server `name` started if it is configured to run but is not running yet."""
        link = self.links.get(name)
        if (
            link is not None
            and link.state in ("stopped", "crashed")
            and not link.config.disabled
            and not link.config.skipped
        ):
            await self._start_link(link)
        return link

    async def restart(self, name: str) -> Link:
        """Stop and start server `name` again (after a failure or a config change)."""
        link = self.links[name]
        await link.stop()
        link.state = "stopped"
        if not link.config.disabled and not link.config.skipped:
            await link.start(self.init_timeout)
            link.reported = link.state != "failed"
        return link

    async def call(
        self, name: str, tool: str, arguments: dict[str, object], timeout: float
    ) -> CallToolResult:
        """Call `tool` on server `name`; raises TimeoutError, or RuntimeError saying why."""
        link = self.links.get(name)
        session = link.session if link is not None else None
        if link is None or session is None:
            why = link.failure() if link is not None and link.why else "it is not running"
            raise RuntimeError(f"MCP server {name!r} is not available: {why}")
        try:
            return await asyncio.wait_for(session.call_tool(tool, arguments), timeout)
        except (asyncio.TimeoutError, TimeoutError):
            raise TimeoutError(f"no answer from MCP server {name!r} within {timeout:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if _closed(e):
                link.crashed("the connection closed during a call")
                await asyncio.sleep(0.2)  # let its stderr reach the log
                raise RuntimeError(
                    link.failure() + "\nit will be restarted at the next turn"
                ) from None
            raise RuntimeError(describe(e, link.config)) from None

    async def stop_all(self) -> None:
        await asyncio.gather(*(link.stop() for link in self.links.values()))

    def close(self) -> None:
        """Stop every server and the loop, remove the logs unless kept (idempotent, safe
        at exit)."""
        if not self._loop.running:
            self.remove_logs()
            return
        with _signals_held():
            try:
                self.wait(self.stop_all(), CLOSE_TIMEOUT)
            except Exception:
                pass
            finally:
                self._loop.stop(5)
                self.remove_logs()


#: Signals that end a program (`kill`, a closed terminal): held while the servers stop.
HELD = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGTERM and SIGHUP wait until the servers are stopped, then take effect.

    A signal that ended the program mid-clean-up (the CLI's exit, a second `kill`) would
    leave a stdio server and its children running. Only the main thread can set handlers;
    elsewhere the clean-up runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        if held:
            signal.raise_signal(held[0])


def _closed(error: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    if isinstance(error, MCPError):
        return error.code == CONNECTION_CLOSED
    import anyio

    return isinstance(error, (anyio.ClosedResourceError, anyio.BrokenResourceError, EOFError))


_hub: Hub | None = None


def hub() -> Hub:
    """The process's hub, closed at exit."""
    global _hub
    if _hub is None:
        _hub = Hub()
        atexit.register(_hub.close)
    return _hub


def shutdown() -> None:
    """Stop the process's servers and forget the hub (a later turn makes a new one)."""
    global _hub
    if _hub is not None:
        _hub.close()
        atexit.unregister(_hub.close)
        _hub = None
