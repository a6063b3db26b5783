"""SIGTERM and SIGHUP for the command line: end the turn as Ctrl-C does, then exit.

A reader that goes away (`elelem-kernel ask ... | head`) ends the turn the same way, as
SIGPIPE ends a Unix tool, quietly: `ReaderGone`.

During a turn (an event loop runs in the main thread) every task of the loop is
cancelled, so the turn ends as interrupted through the same path as Ctrl-C: the bash
tool kills its process groups, `ask --notebook` still appends the turn. With no turn
running, `Stopped` is raised. Only the first signal counts: a second one must not break
the clean-up the first one started.

Python runs signal handlers in the main thread between two bytecodes. A main thread
blocked in a system call (reading the chat prompt, the event loop waiting for input)
only runs them if that call is interrupted, which does not happen when the signal was
delivered to another thread or arrived just before the call began. So the C-level
handler also writes the signal's number to a pipe (`signal.set_wakeup_fd`), and a
watcher thread sends the signal to the main thread again until the handler has run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elelem_kernel.agent.blocks import BlockEvent, Renderer

from elelem_kernel.errors import Stopped
from elelem_kernel.sync import call_soon

SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_RESEND = 0.2  #: seconds between deliveries to the main thread until the handler ran


class Signals:
    """While active (in the main thread), SIGTERM and SIGHUP end the turn; see the module."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}
        self._pipe: tuple[int, int] | None = None
        self._wakeup = -1
        self._handled = threading.Event()

    def __enter__(self) -> Signals:
        if threading.current_thread() is not threading.main_thread():
            return self  # handlers can only be set in the main thread
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        read, write = os.pipe()
        os.set_blocking(write, False)
        self._pipe = (read, write)
        self._wakeup = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        threading.Thread(
            target=self._watch, args=(read,), name="elelem-signals", daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pipe is None:
            return
        signal.set_wakeup_fd(self._wakeup)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        os.close(self._pipe[1])  # the watcher reads the end of the pipe and stops

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            return
        self.received = signum
        self._handled.set()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise Stopped(signum) from None
        for task in asyncio.all_tasks(loop):
            call_soon(loop, task.cancel)

    def _watch(self, read: int) -> None:
        main = threading.main_thread().ident
        try:
            while data := os.read(read, 64):
                ours = [sig for sig in SIGNALS if sig in data]
                while ours and not self._handled.wait(_RESEND):
                    assert main is not None
                    with contextlib.suppress(OSError):
                        signal.pthread_kill(main, ours[0])
        finally:
            os.close(read)


#: The exit code of a program whose reader went away (`| head`): killed by SIGPIPE, 128 + 13.
EXIT_READER_GONE = 141


class ReaderGone:
    """A renderer that ends the turn quietly once stdout's reader has gone (`| head`).

    Unix tools stop at the first write to a closed pipe. Here the first BrokenPipeError
    points stdout at /dev/null (later writes, and the flush at exit, go nowhere) and
    cancels the turn as Ctrl-C does, so its tools' processes end too; the CLI then exits
    with `EXIT_READER_GONE` and says nothing: the reader asked for no more.
    """

    def __init__(self, renderer: Renderer):
        self.renderer = renderer
        self.gone = False

    def __call__(self, event: BlockEvent) -> None:
        if self.gone:
            return
        try:
            self.renderer(event)
        except BrokenPipeError:
            self.gone = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            with contextlib.suppress(RuntimeError):  # no loop: nothing to cancel
                loop = asyncio.get_running_loop()
                for task in asyncio.all_tasks(loop):
                    task.cancel()
