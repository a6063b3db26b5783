"""Run an async turn from synchronous kernel code, and stop it on the stop button.

A magic (and a prompt cell, which goes through the magic) runs synchronously inside the
kernel's running event loop, where `asyncio.run` fails. The turn runs instead on a
private loop in a daemon thread, and the calling (main) thread waits for it. SIGINT (the
stop button) raises KeyboardInterrupt in the main thread, which cancels the turn's task;
the session then ends the turn as `interrupted` and returns normally.

The waiting thread also runs jobs that must happen on the main thread while the turn
runs, such as `input()` over the stdin channel for an approval.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
POLL = 0.05  #: seconds between checks of the waiting thread


class LoopThread:
    """A private asyncio loop in a daemon thread, kept for the life of the kernel.

    Kept rather than made per turn: providers may hold HTTP clients bound to their loop.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        #: jobs for the waiting thread; None only wakes it (the turn is done)
        self._jobs: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future[Any]] | None] = (
            queue.Queue()
        )

    def start(self) -> asyncio.AbstractEventLoop:
        """The running private loop (started on first use)."""
        if self.loop is None or self._thread is None or not self._thread.is_alive():
            loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=loop.run_forever, daemon=True, name="elelem-turns"
            )
            self._thread.start()
            self.loop = loop
        return self.loop

    def run(self, coro: Coroutine[Any, Any, T]) -> tuple[T, bool]:
        """Run `coro` to its end and wait; `(result, interrupted)`.

        The first KeyboardInterrupt cancels the task and keeps waiting for it to wrap up;
        a second one stops waiting and propagates. The coroutine runs in a copy of the
        caller's context, so its output goes to the caller's cell.
        """
        loop = self.start()
        done: concurrent.futures.Future[T] = concurrent.futures.Future()
        holder: dict[str, asyncio.Task[T]] = {}
        context = contextvars.copy_context()

        def begin() -> None:  # idempotent: may be scheduled twice if a stop comes while starting
            if "task" not in holder:
                holder["task"] = task = loop.create_task(coro)
                task.add_done_callback(lambda t: _transfer(t, done))

        done.add_done_callback(lambda _: self._jobs.put(None))  # wake the wait at once

        def cancel() -> None:
            task = holder.get("task")
            if task is not None:
                task.cancel()

        interrupted = scheduled = False
        while True:
            # everything inside the try: a stop may land on any line, even while starting
            try:
                if not scheduled:
                    loop.call_soon_threadsafe(begin, context=context)
                    scheduled = True
                if done.done():
                    break
                self._serve(done)
            except KeyboardInterrupt:
                if interrupted:
                    raise
                interrupted = True
                loop.call_soon_threadsafe(begin, context=context)
                loop.call_soon_threadsafe(cancel)
                scheduled = True
        try:
            return done.result(), interrupted
        except asyncio.CancelledError:  # stopped before the coroutine took its first step
            raise KeyboardInterrupt("stopped before the turn began") from None

    def call_in_main(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Run `fn` on the thread waiting in `run` (for `input()`); its future.

        Thread-safe; meant to be awaited from the turn with `asyncio.wrap_future`.
        """
        answer: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fn, answer))
        return answer

    def _serve(self, done: concurrent.futures.Future[Any]) -> None:
        try:
            job = self._jobs.get(timeout=POLL)
        except queue.Empty:
            return
        if job is None:
            return
        fn, answer = job
        if not answer.set_running_or_notify_cancel():
            return
        try:
            answer.set_result(fn())
        except KeyboardInterrupt:
            answer.set_exception(asyncio.CancelledError())
            raise
        except BaseException as error:  # handed to the awaiting turn
            answer.set_exception(error)


def _transfer(task: asyncio.Task[T], done: concurrent.futures.Future[T]) -> None:
    if task.cancelled():
        done.set_exception(asyncio.CancelledError())
    elif task.exception() is not None:
        done.set_exception(task.exception())
    else:
        done.set_result(task.result())
