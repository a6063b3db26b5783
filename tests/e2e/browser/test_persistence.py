"""Save, restart, reload: the turns stay and the conversation goes on (issue 8, scenario 5).

The frozen outputs must render from the saved file with no widget state ("Error
displaying widget" never shows), and after the restart the model receives the earlier
turn, restored from the notebook.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.lab import said, scripted_turns
from tests.e2e.browser.pages import FROZEN, Lab

pytestmark = pytest.mark.browser


def test_save_restart_reload_then_continue(page: Lab, wire, lab_root):
    exchanges = [
        ("remember the word avocado", "Noted: the word is avocado."),
        ("which word did I ask you to remember?", "You asked me to remember avocado."),
    ]
    name = scripted_turns(wire, lab_root / "persist.ipynb", exchanges)
    lab = page.open(name, "persist")
    lab.turns("remember the word avocado")
    lab.save()
    lab.restart()
    lab.reload()

    first = lab.cell("remember the word avocado")
    first.locator(FROZEN).wait_for()
    assert "Noted: the word is avocado." in first.locator(FROZEN).inner_text()
    assert lab.widget_errors() == 0
    lab.shot("5-persist-after-reload", first)

    second = lab.resume("which word did I ask you to remember?")
    assert "You asked me to remember avocado." in second.locator(FROZEN).inner_text()
    assert ("user", "remember the word avocado") in said(wire)
    assert ("assistant", "Noted: the word is avocado.") in said(wire)
    lab.shot("5-persist-continued", second)
