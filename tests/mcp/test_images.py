"""Many large images from a real MCP server: a bounded number is decoded, and fitting them
runs off the event loop, so the person's stop acts while they are being fitted."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from elelem_kernel import images
from elelem_kernel.agent import media
from elelem_kernel.assembly.sessions import new_session
from tests.mcp import servers
from tests.mcp.servers import write_config
from tests.scripted import Scripted, call, say


def session(home: Path, ws: Path, arguments: dict):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("pictures")})
    s = new_session("echo", workspace=ws, mode="auto")
    s.facts.provider = Scripted(call("mcp__flaky__pictures", arguments), say("seen"))
    return s


def test_images_that_fail_to_fit_count_toward_the_cap(home, ws):
    """40 images whose header reads but whose pixels do not decode: each costs a decode
    attempt, so only the first `MAX_IMAGES` are tried and the rest are left out unread."""
    s = session(home, ws, {"count": 40, "side": 3000, "broken": True})
    result = s.run("look at them")
    assert result.stop == "end_turn", result.error
    [record] = [c for r in result.record["rounds"] for c in r["calls"]]
    assert record["ok"] and not record.get("images")
    notes = json.loads(record["result"])["images_not_shown"]
    assert len(notes) == 40
    tried = [n for n in notes if "could not be read" in n]
    assert len(tried) == media.MAX_IMAGES, notes
    assert notes[media.MAX_IMAGES :] == [f"more than {media.MAX_IMAGES} images from one call"] * 32


def test_fitting_runs_off_the_event_loop_and_a_stop_ends_it(home, ws, monkeypatch):
    """While the first image is being fitted, the event loop still runs: the turn is
    cancelled from it, ends as interrupted, and the images not yet fitted are not."""
    pytest.importorskip("PIL")
    fitting, cancelled = threading.Event(), threading.Event()
    threads: list[int] = []
    real_fit = images.fit

    def fit(image):
        threads.append(threading.get_ident())
        if not fitting.is_set():
            fitting.set()
            cancelled.wait(10)  # held until the loop has cancelled the turn, if it can
        return real_fit(image)

    monkeypatch.setattr(images, "fit", fit)
    s = session(home, ws, {"count": 12, "side": 2400})

    async def main():
        loop_thread = threading.get_ident()
        task = asyncio.ensure_future(s.turn("look at them"))
        while not fitting.is_set() and not task.done():
            await asyncio.sleep(0.01)
        loop_was_free = not task.done()
        task.cancel()
        result = await task
        cancelled.set()
        return loop_thread, loop_was_free, result

    loop_thread, loop_was_free, result = asyncio.run(main())
    assert loop_was_free and threads and loop_thread not in threads
    assert result.stop == "interrupted"
    [record] = [c for r in result.record["rounds"] for c in r["calls"]]
    assert media.INTERRUPTED in json.loads(record["result"])["images_not_shown"]
    assert len(threads) == 1  # the images after the first were never fitted
