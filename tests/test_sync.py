"""The one sync-over-async bridge: `ask()`, `review()` and `Session.run` from plain code."""

from __future__ import annotations

import asyncio

import pytest

import elelem_kernel
from elelem_kernel.agent import registry
from elelem_kernel.events import Provider
from elelem_kernel.sync import run_sync


class Closing(Provider):
    """A provider that answers, or raises `fails`, and records when its client is closed."""

    def __init__(self, fails: BaseException | None = None):
        self.fails = fails
        self.model = "closing"
        self.closed_on: list[object] = []
        self.fetched_on: list[object] = []

    async def fetch(self, messages, tools, emit):
        self.fetched_on.append(asyncio.get_running_loop())
        if self.fails is not None:
            raise self.fails
        emit({"type": "saying", "text": "closed after"})

    async def aclose(self):
        self.closed_on.append(asyncio.get_running_loop())


@pytest.fixture
def made(monkeypatch, tmp_path):
    """Providers made by `ask` through the registry, in the order made."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    config = registry.Config()
    monkeypatch.setattr(registry, "CONFIG", config)
    monkeypatch.setattr(registry, "_plugins_loaded", set())
    monkeypatch.setattr(registry, "_builtins_loaded", True)
    providers: list[Closing] = []

    def factory(model=None, fails=None, **options):
        providers.append(Closing(fails))
        return providers[-1]

    config.provider("closing", factory)
    return providers


def test_ask_closes_the_providers_client_on_the_loop_that_used_it(made):
    assert elelem_kernel.ask("hi", provider="closing").reply == "closed after"

    async def in_a_notebook_cell():
        return elelem_kernel.ask("hi", provider="closing")

    assert asyncio.run(in_a_notebook_cell()).reply == "closed after"
    for provider in made:
        assert provider.closed_on == provider.fetched_on[:1] and len(provider.closed_on) == 1


def test_ask_inside_a_running_loop_raises_what_its_thread_raised(made):
    async def in_a_notebook_cell():
        return elelem_kernel.ask("hi", provider="closing", fails=SystemExit("stopped"))

    with pytest.raises(SystemExit, match="stopped"):
        asyncio.run(in_a_notebook_cell())
    assert len(made[0].closed_on) == 1


def test_the_bridge_returns_and_raises_the_same_inside_and_outside_a_loop():
    async def value():
        return 42

    async def boom():
        raise ValueError("from the coroutine")

    async def inside(main):
        return run_sync(main)

    assert run_sync(value) == 42 == asyncio.run(inside(value))
    for attempt in (lambda: run_sync(boom), lambda: asyncio.run(inside(boom))):
        with pytest.raises(ValueError, match="from the coroutine"):
            attempt()


def test_call_soon_runs_on_the_loop_from_another_thread_and_not_once_it_is_closed():
    import threading

    from elelem_kernel.sync import call_soon

    async def main() -> tuple[list[object], bool]:
        loop = asyncio.get_running_loop()
        ran: list[object] = []
        done = asyncio.Event()

        def note(value: object) -> None:
            ran.append((value, threading.current_thread() is threading.main_thread()))
            done.set()

        sent: list[bool] = []
        worker = threading.Thread(target=lambda: sent.append(call_soon(loop, note, 7)))
        worker.start()
        await done.wait()
        worker.join()
        return ran, sent[0]

    assert asyncio.run(main()) == ([(7, True)], True)
    closed = asyncio.new_event_loop()
    closed.close()
    assert call_soon(closed, print, "never") is False


def test_a_hook_may_be_def_or_async_def():
    import threading

    from elelem_kernel.sync import call_off_loop, resolve

    async def twice(n: int) -> int:
        return 2 * n

    def where(n: int) -> tuple[int, bool]:
        return n, threading.current_thread() is threading.main_thread()

    def later(n: int):  # a plain def that hands back an awaitable
        return twice(n)

    async def main() -> list[object]:
        return [
            await resolve(twice(2)),
            await resolve(5),
            await call_off_loop(twice, 3),
            await call_off_loop(where, 1),  # in a worker thread, not the loop's
            await call_off_loop(later, 4),
        ]

    assert asyncio.run(main()) == [4, 5, 6, (1, False), 8]
