"""The processes one tool call starts, stopped together at a deadline or on cancel.

A search that runs in a worker thread cannot be interrupted from the event loop, but the
processes doing its work can be killed from anywhere: the thread then sees them end and
returns. `reason` says why they were stopped, so the caller can tell a timeout from an
interrupt and from a process that failed on its own.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from types import TracebackType
from typing import Any

from elelem_kernel.errors import GroupStopped


class Children:
    """Processes started through `popen`, all killed by `stop` (or after `timeout` s)."""

    def __init__(self, timeout: float | None = None):
        self.timeout = timeout
        self.reason: str | None = None
        self._procs: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if timeout is not None:
            self._timer = threading.Timer(timeout, self.stop, ("timeout",))
            self._timer.daemon = True
            self._timer.start()

    def popen(self, command: list[str], **options: Any) -> subprocess.Popen[bytes]:
        """`subprocess.Popen(command, **options)`, killed with the others on `stop`."""
        with self._lock:
            if self.reason is not None:
                raise GroupStopped(self.reason)
            proc: subprocess.Popen[bytes] = subprocess.Popen(command, **options)
            self._procs.append(proc)
            return proc

    def stop(self, reason: str) -> None:
        """Kill every process started (the first reason given is kept)."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            procs = list(self._procs)
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.kill()

    def close(self) -> None:
        """Cancel the deadline and kill what still runs (the work is over)."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            procs, self._procs = self._procs, []
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    proc.kill()
                proc.wait()

    def __enter__(self) -> Children:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
