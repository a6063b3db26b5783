"""A plot the agent draws, as a person sees it in JupyterLab: once, in the cell, with the
tool card naming it and the (demo) model saying it received it."""

from __future__ import annotations

import pytest

from tests.e2e.browser.pages import FROZEN, Lab

pytestmark = pytest.mark.browser


def test_the_agents_plot_shows_once_in_the_cell(page: Lab):
    pytest.importorskip("matplotlib")
    lab = page.open("elelem_kernel.ipynb", "images")
    lab.run("/mode auto")
    cell = lab.turn("plot the squares")
    frozen = cell.locator(FROZEN)
    plots = cell.locator(".jp-OutputArea-output img")
    assert plots.count() == 1, "the plot is shown once, by the cell's own display"
    box = plots.first.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 150
    text = frozen.inner_text()
    assert "I received an image from python" in text.replace("`", "")
    cards = frozen.locator("details:has(> summary b)")
    card = cards.filter(has=lab.page.locator("summary b", has_text="python")).first
    card.locator("summary").first.click()
    assert "PNG image, shown in the cell" in card.inner_text()
    lab.shot("images-plot", cell)
    assert lab.widget_errors() == 0
