"""Save, restart, reload: the turns stay and the conversation goes on (issue 8, scenario 5).

The frozen outputs must render from the saved file with no widget state ("Error
displaying widget" never shows), and after the restart the model receives the earlier
turn, restored from the notebook.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN, Lab
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser


def test_save_restart_reload_then_continue(page: Lab, wire, lab_root):
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(text="Noted: the word is avocado.")),
        reply("openai", Round(text="You asked me to remember avocado.")),
    )
    name = write_notebook(
        lab_root / "persist.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai\nremember the word avocado",
            "%%elelem -p openai\nwhich word did I ask you to remember?",
        ],
    )
    lab = page.open(name, "persist")
    lab.run("%load_ext elelem_kernel")
    first = lab.run("remember the word avocado")
    first.locator(FROZEN).wait_for()
    lab.save()
    lab.restart()
    lab.reload()

    first = lab.cell("remember the word avocado")
    first.locator(FROZEN).wait_for()
    assert "Noted: the word is avocado." in first.locator(FROZEN).inner_text()
    assert lab.widget_errors() == 0
    lab.shot("5-persist-after-reload", first)

    lab.run("%load_ext elelem_kernel")
    second = lab.run("which word did I ask you to remember?")
    second.locator(FROZEN).wait_for()
    assert "You asked me to remember avocado." in second.locator(FROZEN).inner_text()
    messages = wire.requests[-1].body["messages"]
    said = [(m["role"], str(m.get("content"))) for m in messages]
    assert ("user", "remember the word avocado") in said
    assert ("assistant", "Noted: the word is avocado.") in said
    lab.shot("5-persist-continued", second)
