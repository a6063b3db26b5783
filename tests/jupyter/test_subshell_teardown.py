"""ipykernel's pending handler of a subshell JupyterLab deleted is no red line in a cell."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from elelem_kernel.jupyter.shell_front import quiet_subshell_teardown


def abandoned(coro_factory) -> None:
    """Start a task of `coro_factory()` on a loop, then drop the loop with it pending (what
    ipykernel does when a subshell's thread ends mid-message); asyncio logs it when it is
    collected."""
    loop = asyncio.new_event_loop()
    task = loop.create_task(coro_factory())
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.close()
    del task, loop
    gc.collect()


def test_ipykernels_abandoned_handler_is_not_logged_but_others_are(caplog):
    utils = pytest.importorskip("ipykernel.utils")
    quiet_subshell_teardown()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        abandoned(utils._async_in_context(lambda: asyncio.sleep(3600)))
        assert "run_in_context" not in caplog.text  # ipykernel's handler, filtered

        async def mine():
            await asyncio.sleep(3600)

        abandoned(mine)
    assert "Task was destroyed but it is pending" in caplog.text and "mine" in caplog.text
