"""Capture what one thread prints, leaving every other thread's output where it was going.

`contextlib.redirect_stdout` swaps `sys.stdout` for the whole process: while the python
tool runs on its worker thread, a renderer or a kernel thread printing at the same time
would land in the model's tool result. Here `sys.stdout` and `sys.stderr` are replaced by
routers while any capture is active; a router sends each write to the writing thread's
capture if it has one, else to the stream it replaced.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from elelem_kernel.text import HeadTail
from elelem_kernel.tools.bounds import MAX_BYTES


class Capture(io.TextIOBase):
    """A text stream keeping the first and last part of what is written."""

    def __init__(self, limit: int = MAX_BYTES // 2):
        self.sink = HeadTail(limit // 2, limit - limit // 2, b"")

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.sink.feed(text.encode("utf-8", errors="replace"))
        return len(text)

    def text(self) -> str:
        """What was written, head and tail kept when it was long."""
        return self.sink.text()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"


class _Router:
    """Stands in for sys.stdout or sys.stderr while captures are active."""

    def __init__(self, real: TextIO, slot: int):
        self.real = real
        self.slot = slot

    def _target(self) -> Any:
        sinks = getattr(_local, "sinks", None)
        return sinks[self.slot] if sinks else self.real

    def write(self, text: str) -> int:
        written = self._target().write(text)
        return written if isinstance(written, int) else len(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)


_local = threading.local()
_lock = threading.Lock()
_active = 0
_routers: tuple[_Router, _Router] | None = None


@contextlib.contextmanager
def captured() -> Iterator[tuple[Capture, Capture]]:
    """Capture this thread's stdout and stderr for the duration of the block."""
    global _active, _routers
    out, err = Capture(), Capture()
    with _lock:
        if _active == 0:
            _routers = (_Router(sys.stdout, 0), _Router(sys.stderr, 1))
            sys.stdout, sys.stderr = _routers
        _active += 1
    previous = getattr(_local, "sinks", None)
    _local.sinks = (out, err)
    try:
        yield out, err
    finally:
        _local.sinks = previous
        with _lock:
            _active -= 1
            if _active == 0 and _routers is not None:
                # put back what we replaced, unless someone replaced our routers meanwhile
                if sys.stdout is _routers[0]:
                    sys.stdout = _routers[0].real
                if sys.stderr is _routers[1]:
                    sys.stderr = _routers[1].real
                _routers = None
