"""The processes one tool call starts, stopped together at a deadline or on cancel.

A search that runs in a worker thread cannot be interrupted from the event loop, but the
processes doing its work can be killed from anywhere: the thread then sees them end and
returns. `reason` says why they were stopped, so the caller can tell a timeout from an
interrupt and from a process that failed on its own.

Deadlines are kept by one daemon thread for every group (`_Deadlines`), not a timer
thread per group: starting a thread waits until it runs, milliseconds of each search on
a loaded machine.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import subprocess
import threading
import time
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
        self._deadline: _Due | None = None
        if timeout is not None:
            self._deadline = _DEADLINES.add(time.monotonic() + timeout, self)

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
        if self._deadline is not None:
            _DEADLINES.remove(self._deadline)
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


#: A deadline: when (monotonic seconds), a tie-breaker, the group it stops.
_Due = tuple[float, int, Children]


class _Deadlines:
    """Stops each group whose deadline passed, from one daemon thread started when first
    needed (and again in a forked child, where it does not run)."""

    def __init__(self) -> None:
        self._due: list[_Due] = []
        self._changed = threading.Condition()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, when: float, group: Children) -> _Due:
        """Stop `group` with reason "timeout" at `when`, unless `remove`d before."""
        due = (when, next(self._order), group)
        with self._changed:
            heapq.heappush(self._due, due)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="elelem-deadlines")
                self._thread.daemon = True
                self._thread.start()
            elif self._due[0] is due:
                self._changed.notify()
        return due

    def remove(self, due: _Due) -> None:
        """Forget a deadline (its group closed); nothing if it already passed."""
        with self._changed:
            if due in self._due:
                self._due.remove(due)
                heapq.heapify(self._due)

    def _run(self) -> None:
        while True:
            with self._changed:
                wait = self._due[0][0] - time.monotonic() if self._due else None
                if wait is None or wait > 0:
                    self._changed.wait(wait)
                    continue
                group = heapq.heappop(self._due)[2]
            group.stop("timeout")


_DEADLINES = _Deadlines()
