from __future__ import annotations

import _thread
import asyncio
import threading
import time

import pytest

from elelem_kernel.sync import LoopThread


@pytest.fixture(scope="module")
def runner():
    return LoopThread("elelem-turns")


def test_runs_a_coroutine_on_its_own_loop(runner):
    async def work():
        return threading.current_thread().name

    assert runner.run(work()) == ("elelem-turns", False)


def test_keyboard_interrupt_cancels_and_the_turn_wraps_up(runner):
    started = threading.Event()

    async def turn():
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "interrupted"  # what Session.turn does
        return "end_turn"

    def interrupt():
        started.wait(5)
        _thread.interrupt_main()

    threading.Thread(target=interrupt, daemon=True).start()
    assert runner.run(turn()) == ("interrupted", True)


def test_jobs_run_on_the_waiting_thread(runner):
    main = threading.current_thread()

    async def turn():
        seen = await asyncio.wrap_future(runner.call_in_main(threading.current_thread))
        return seen is main

    assert runner.run(turn()) == (True, False)


def test_errors_propagate(runner):
    async def broken():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        runner.run(broken())


def test_a_second_interrupt_stops_waiting(runner):
    started = threading.Event()

    async def stubborn():
        started.set()
        for _ in range(100):
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                pass  # ignores the first stop, as a wedged turn would
        return "late"

    def interrupt_twice():
        started.wait(5)
        _thread.interrupt_main()
        time.sleep(0.3)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_twice, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        runner.run(stubborn())


def test_a_stop_before_the_turn_begins(runner):
    """The stop lands while the turn is being scheduled: it never runs, and run() says so."""
    ran = []

    async def turn():
        ran.append(True)
        return "end_turn"

    block = threading.Event()
    runner.start().call_soon_threadsafe(block.wait, 5)  # hold the loop so nothing starts yet
    threading.Timer(0.2, _thread.interrupt_main).start()
    threading.Timer(0.5, block.set).start()
    with pytest.raises(KeyboardInterrupt, match="before the turn began"):
        runner.run(turn())
    assert ran == []


def test_the_wait_ends_when_the_turn_does_not_at_the_next_poll(monkeypatch):
    import elelem_kernel.sync as runner_module

    monkeypatch.setattr(runner_module, "POLL", 600)  # a poll would outlast the join below
    fresh = LoopThread()
    fresh.start()
    out: list = []

    async def turn():
        await asyncio.sleep(0.1)  # finish while the waiting thread is already waiting
        return "end_turn"

    waiter = threading.Thread(target=lambda: out.append(fresh.run(turn())), daemon=True)
    waiter.start()
    waiter.join(timeout=60)
    assert out == [("end_turn", False)]


def test_submit_and_wait_reach_the_loop_from_any_thread_and_stop_ends_it():
    bridge = LoopThread("elelem-test")

    async def where():
        return threading.current_thread().name

    assert bridge.wait(where(), 30) == "elelem-test"
    assert bridge.submit(where()).result(30) == "elelem-test"
    first = bridge.loop
    bridge.stop(5)
    assert not bridge.running and bridge.loop is None
    assert bridge.wait(where(), 30) == "elelem-test"  # a later call starts it again
    assert bridge.loop is not first
    bridge.stop(5)


def test_run_from_loop_cancels_the_coroutine_there():
    bridge = LoopThread("elelem-test")
    started, ended = threading.Event(), threading.Event()

    async def long():
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            ended.set()

    async def caller():
        task = asyncio.ensure_future(bridge.run_from_loop(long()))
        await asyncio.to_thread(started.wait, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(caller())
    assert ended.wait(30)
    bridge.stop(5)


def test_on_own_loop_runs_on_a_fresh_loop_and_cancelling_waits_for_the_end():
    from elelem_kernel.sync import on_own_loop

    ended = threading.Event()

    async def where():
        return threading.current_thread().name, asyncio.get_running_loop()

    async def long():
        try:
            await asyncio.sleep(30)
        finally:
            ended.set()

    async def caller():
        name, loop = await on_own_loop(where(), name="elelem-own")
        assert (name, loop is asyncio.get_running_loop()) == ("elelem-own", False)
        task = asyncio.ensure_future(on_own_loop(long()))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert ended.is_set()  # the wait ended only once the coroutine had

    asyncio.run(caller())
