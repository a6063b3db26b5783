"""One bridge from synchronous code to a coroutine: `Session.run`, `ask()` and `review()`.

Outside an event loop the coroutine runs on a private loop in this thread; inside one (a
notebook cell, whose thread is busy running that loop) it runs on a private loop in a new
thread, and whatever it raises is raised here. Either way `close()` runs on that same loop
before the loop is closed, because an HTTP client belongs to the loop that opened it.

Ctrl-C cancels the coroutine and waits for it to finish: with `interrupt="result"` its return
value is returned (a turn ends as interrupted, its partial reply kept); with "raise" (the
default, what `asyncio.run` does) KeyboardInterrupt is raised after it finished. In the main
thread the first Ctrl-C only cancels: a KeyboardInterrupt raised wherever the program happens
to be could land inside the coroutine's own code (printing an approval question, say) and
skip the ending that cancellation gets. A second Ctrl-C raises as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, Literal, TypeVar

T = TypeVar("T")


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
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = _run(main, None, close, interrupt)
        except BaseException as error:  # raised again in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=work, name="elelem-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]


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
            try:
                if close is not None:
                    loop.run_until_complete(close())
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()


@contextlib.contextmanager
def _ctrl_c_cancels(task: asyncio.Task[Any]) -> Iterator[list[bool]]:
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

    def on_ctrl_c(signum: int, frame: Any) -> None:
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
