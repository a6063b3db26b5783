"""The bridges between synchronous code and event loops: the one home for all of them.

- `run_sync`: synchronous code runs one coroutine to its end (`Session.run`, `ask()`,
  `review()`, the CLI), on a private loop (or one the caller keeps).
- `LoopThread`: a private loop in a daemon thread, kept running (the kernel's turns, the MCP
  hub's servers), reached from synchronous code (`run`, `wait`), any thread (`submit`) or
  another loop (`run_from_loop`).
- `on_own_loop`: a coroutine awaited on a fresh loop in a thread of its own, for code that
  must not run on the caller's loop (nbclient installs signal handlers on its loop).
- `call_soon`: a function run on a loop from another thread (a worker, a signal handler),
  quietly not at all once that loop is closed.
- `resolve` and `call_off_loop`: a hook that may be `def` or `async def` (a tool, an
  approver, a provider's question), called from a loop without blocking it.

`run_sync`: outside an event loop the coroutine runs on a private loop in this thread; inside
one (a notebook cell, whose thread is busy running that loop) it runs on a private loop in a
new thread, and whatever it raises is raised here. Either way `close()` runs on that same
loop before the loop is closed, because an HTTP client belongs to the loop that opened it.

Ctrl-C cancels the coroutine and waits for it to finish: with `interrupt="result"` its return
value is returned (a turn ends as interrupted, its partial reply kept); with "raise" (the
default, what `asyncio.run` does) KeyboardInterrupt is raised after it finished. In the main
thread the first Ctrl-C only cancels: a KeyboardInterrupt raised wherever the program happens
to be could land inside the coroutine's own code (printing an approval question, say) and
skip the ending that cancellation gets. A second Ctrl-C raises as usual.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import queue
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from types import FrameType
from typing import Any, Literal, TypeVar

T = TypeVar("T")
POLL = 0.05  #: seconds between checks of a thread waiting in `LoopThread.run`


def run_sync(
    main: Callable[[], Coroutine[Any, Any, T]],
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    close: Callable[[], Awaitable[None]] | None = None,
    interrupt: Literal["raise", "result"] = "raise",
) -> T:
    """Run `main()` to the end and return its result; `loop`: run there and keep it open."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(main, loop, close, interrupt)
    results: list[T] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(_run(main, None, close, interrupt))
        except BaseException as error:  # raised again in the caller's thread
            errors.append(error)

    thread = threading.Thread(target=work, name="elelem-sync", daemon=True)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]


def _run(
    main: Callable[[], Coroutine[Any, Any, T]],
    loop: asyncio.AbstractEventLoop | None,
    close: Callable[[], Awaitable[None]] | None,
    interrupt: str,
) -> T:
    own = loop is None
    loop = loop or asyncio.new_event_loop()
    task = loop.create_task(main())
    try:
        try:
            with _ctrl_c_cancels(task) as pressed:
                result = loop.run_until_complete(task)
            if pressed and interrupt == "raise":
                raise KeyboardInterrupt
            return result
        except asyncio.CancelledError:  # the first Ctrl-C, and the coroutine let it through
            raise KeyboardInterrupt from None
        except KeyboardInterrupt:
            if task.done():
                raise
            task.cancel()
            try:
                result = loop.run_until_complete(task)
            except asyncio.CancelledError:
                raise KeyboardInterrupt from None
            if interrupt == "raise":
                raise
            return result
    finally:
        if own:
            _close(loop, close)


def _close(loop: asyncio.AbstractEventLoop, close: Callable[[], Awaitable[None]] | None) -> None:
    """Run `close()` on `loop` (the loop that opened what it closes), then close the loop."""
    try:
        if close is not None:
            loop.run_until_complete(close())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


@contextlib.contextmanager
def _ctrl_c_cancels(task: asyncio.Task[object]) -> Iterator[list[bool]]:
    """In the main thread, the first Ctrl-C cancels `task` instead of raising.

    Yields a list that is true once Ctrl-C was pressed.
    """
    pressed: list[bool] = []
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield pressed
        return

    def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
        if pressed or task.done():
            raise KeyboardInterrupt
        pressed.append(True)
        task.cancel()
        task.get_loop().call_soon_threadsafe(lambda: None)  # wake the loop's wait

    signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class LoopThread:
    """A private asyncio loop in a daemon thread, kept until `stop`.

    Kept rather than made per call: an HTTP client (a provider's) or a client session (an
    MCP server's) belongs to the loop that opened it, and must outlive one turn.

    In the kernel a magic (and a prompt cell, which goes through the magic) runs
    synchronously inside ipykernel's running loop, where `asyncio.run` fails: the turn runs
    here and the main thread waits in `run`. The stop button's SIGINT raises
    KeyboardInterrupt there, which cancels the turn's task; the session ends the turn as
    `interrupted` and returns normally. While it waits, the main thread runs the jobs that
    must happen there (`call_in_main`), such as `input()` over the stdin channel.
    """

    def __init__(self, name: str = "elelem-loop") -> None:
        self.name = name  #: the thread's name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        #: jobs for the thread waiting in `run`; None only wakes it (the coroutine is done)
        self._jobs: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future[Any]] | None] = (
            queue.Queue()
        )

    @property
    def running(self) -> bool:
        """Whether the loop's thread runs (started and not stopped)."""
        return self.loop is not None and self._thread is not None and self._thread.is_alive()

    def start(self) -> asyncio.AbstractEventLoop:
        """The running loop (started on first use, and again if its thread ended)."""
        with self._lock:
            if self.loop is None or not self.running:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=loop.run_forever, daemon=True, name=self.name
                )
                self._thread.start()
                self.loop = loop
            return self.loop

    def stop(self, timeout: float) -> None:
        """Stop the loop and wait up to `timeout` seconds for its thread to end."""
        loop, thread = self.loop, self._thread
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout)
        self.loop = self._thread = None

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coro` on the loop, from any thread; its future (cancelling it cancels `coro`)."""
        return asyncio.run_coroutine_threadsafe(coro, self.start())

    async def run_from_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on this loop from another loop; cancelling the wait cancels it there."""
        return await asyncio.wrap_future(self.submit(coro))

    def wait(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop from synchronous code and wait for it (TimeoutError after
        `timeout` seconds)."""
        return self.submit(coro).result(timeout)

    def run(self, coro: Coroutine[Any, Any, T]) -> tuple[T, bool]:
        """Run `coro` to its end and wait, serving `call_in_main` jobs; `(result, interrupted)`.

        For a thread that may be interrupted (the kernel's main thread, where the stop button
        raises KeyboardInterrupt): the first KeyboardInterrupt cancels the task and keeps
        waiting for it to wrap up; a second one stops waiting and propagates. The coroutine
        runs in a copy of the caller's context, so its output goes to the caller's cell.
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
                self._serve()
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

        Thread-safe; meant to be awaited from the coroutine with `asyncio.wrap_future`.
        """
        answer: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((fn, answer))
        return answer

    def _serve(self) -> None:
        """Run the next job for the waiting thread, if one comes within `POLL` seconds."""
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
        except BaseException as error:  # handed to the awaiting coroutine
            answer.set_exception(error)


def _transfer(task: asyncio.Task[T], done: concurrent.futures.Future[T]) -> None:
    if task.cancelled():
        done.set_exception(asyncio.CancelledError())
    elif task.exception() is not None:
        done.set_exception(task.exception())
    else:
        done.set_result(task.result())


async def on_own_loop(coro: Coroutine[Any, Any, T], name: str = "elelem-own-loop") -> T:
    """Await `coro` on a fresh loop in a thread of its own (`asyncio.run` there, which also
    ends the tasks it left); cancelling here cancels it there and waits for it to end."""
    outer = asyncio.get_running_loop()
    done: asyncio.Future[T] = outer.create_future()
    inner: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[T]]] = []
    started = threading.Event()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if isinstance(error, asyncio.CancelledError):
            done.cancel()
        elif error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None
        inner.append((asyncio.get_running_loop(), task))
        started.set()
        return await coro

    def run() -> None:
        value: T | None = None
        error: BaseException | None = None
        try:
            value = asyncio.run(main())
        except BaseException as e:  # handed to the awaiting side
            error = e
        finally:
            started.set()
        call_soon(outer, settle, value, error)  # not at all if the outer loop is gone

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        await asyncio.to_thread(started.wait)
        if inner:
            loop, task = inner[0]
            call_soon(loop, task.cancel)  # not at all if it has just finished
        await asyncio.to_thread(thread.join, 30)
        if not done.done():
            done.cancel()
        elif not done.cancelled():
            done.exception()  # seen: the coroutine ended anyway, and this wait was cancelled
        raise


def call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> bool:
    """Run `fn(*args)` on `loop` soon, from any thread; False, and nothing runs, once the
    loop is closed (nobody waits there any more).

    Also right in a signal handler of the loop's own thread: it wakes the loop's wait.
    """
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # "Event loop is closed"
        return False
    return True


async def resolve(value: Awaitable[T] | T) -> T:
    """`value`, awaited when it is awaitable: what a `def` or an `async def` hook returned."""
    if inspect.isawaitable(value):
        return await value
    return value


async def call_off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` without blocking the loop: an `async def` awaited here, a plain `def` run
    in a worker thread (it may block), and what it returns awaited if it is awaitable."""
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    return await resolve(await asyncio.to_thread(fn, *args))
