"""The stop button in the middle of a slow stream (issue 8, scenario 3).

The `openai` provider talks to the loopback wire server, which streams a long reply
slowly and then holds the connection; the toolbar's stop button must end the turn,
keep the partial reply marked as interrupted, and leave the kernel ready for the next
prompt.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN, LIVE, Lab
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser

STORY = " ".join(f"word{i}" for i in range(1, 401))


def test_stop_button_interrupts_a_slow_stream(page: Lab, wire, lab_root):
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(text=STORY)).slow(0.05).stall_after(80),
        reply("openai", Round(text="Still here, ready for more.")),
    )
    name = write_notebook(
        lab_root / "stop.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai\ntell me a very long story",
            "%%elelem -p openai\nare you still there?",
        ],
    )
    lab = page.open(name, "stop")
    lab.run("%load_ext elelem_kernel")
    cell = lab.start("tell me a very long story", watch=True)
    cell.locator(LIVE).get_by_text("word20", exact=False).wait_for()
    lab.shot("3-stop-streaming", cell)
    try:  # the stream stalls after 80 chunks, so the live view holds still for the dark shot
        lab.theme("JupyterLab Dark")
        lab.shot("3-stop-streaming-dark", cell)
    finally:
        lab.theme("JupyterLab Light")
    assert lab.seen()["waiting"], "no progress shown while waiting for the first token"
    lab.interrupt()
    lab.wait_done(cell)

    frozen = cell.locator(FROZEN)
    frozen.wait_for()
    text = frozen.inner_text()
    assert "interrupted" in text
    assert "word20" in text, "the partial reply is kept"
    assert "word400" not in text
    assert "turn interrupted" in cell.inner_text()
    lab.shot("3-stop-interrupted", cell)

    after = lab.run("are you still there?")
    after.locator(FROZEN).wait_for()
    assert "Still here, ready for more." in after.locator(FROZEN).inner_text()
    assert len(wire.requests) == 2
    lab.shot("3-stop-next-prompt", after)
