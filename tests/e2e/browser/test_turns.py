"""A turn in the browser: thinking, two parallel tool cards, the streamed reply, frozen.

Issue 8, scenarios 1 and 2: the `%%elelem` cell of quickstart.ipynb in a Python kernel,
and a prompt cell of elelem_kernel.ipynb in the Elelem kernel, with the demo model.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.pages import CARD, FROZEN, Lab

pytestmark = pytest.mark.browser


def check_turn(lab: Lab, cell, name: str, before: int) -> None:
    """The live view streamed thinking, two cards with results and the reply; then froze."""
    seen = lab.seen()
    assert seen["live"], "the live widget view never showed"
    assert seen["thinking"], "no thinking in the live view"
    assert seen["cards"] == 2, f"expected two tool cards live, saw {seen['cards']}"
    assert seen["results"] == 2, "each parallel call should show its result in its own card"
    assert len(seen["lengths"]) >= 4, f"the reply did not stream: {seen['lengths']}"

    frozen = cell.locator(FROZEN)
    frozen.wait_for()
    assert lab.widget_errors() == 0
    cards = frozen.locator("details:has(> summary b)")
    assert cards.count() == 2
    list_card, read_card = cards.nth(0), cards.nth(1)
    assert list_card.locator("summary b").inner_text() == "list"
    assert read_card.locator("summary b").inner_text() == "read"
    for card in (list_card, read_card):
        card.locator("summary").first.click()
    listed, read = list_card.inner_text(), read_card.inner_text()
    assert "data.csv" in listed and "elelem-kernel notebooks" not in listed
    assert "elelem-kernel notebooks" in read and '"files"' not in read
    assert frozen.get_by_text("thinking").count() >= 1
    assert "demo model" in frozen.inner_text()
    lab.shot(f"{name}-frozen", cell)
    # No console error during the turn: not even ipywidgets' "processLuminoMessage" (issue 18).
    during = lab.console_errors[before:]
    assert during == [], during


def test_quickstart_magic_turn(page: Lab):
    lab = page.open("quickstart.ipynb", "quickstart")
    lab.run("%load_ext elelem_kernel")
    before = len(lab.console_errors)
    cell = lab.start("what is in this folder?", watch=True)
    cell.locator(f"{CARD}, {FROZEN}").first.wait_for()  # live if we are quick enough
    lab.shot("1-quickstart-live", cell)
    lab.wait_done(cell)
    check_turn(lab, cell, "1-quickstart", before)
    lab.shot("1-quickstart-page")
    assert not lab.dialogs


def test_elelem_kernel_turn(page: Lab):
    lab = page.open("elelem_kernel.ipynb", "elelem-kernel")
    kernel = lab.page.locator(".jp-NotebookPanel-toolbar .jp-KernelName").first
    assert "Elelem" in kernel.inner_text()
    before = len(lab.console_errors)
    cell = lab.start("what is in this folder?", watch=True)
    cell.locator(f"{CARD}, {FROZEN}").first.wait_for()  # live if we are quick enough
    lab.shot("2-elelem-kernel-live", cell)
    lab.wait_done(cell)
    check_turn(lab, cell, "2-elelem-kernel", before)
    lab.shot("2-elelem-kernel-page")
