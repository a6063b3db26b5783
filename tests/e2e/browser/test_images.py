"""A plot the agent draws, as a person sees it in JupyterLab: once, beside the tool card of
the call that drew it (not under the turn's footer), and the (demo) model saying it
received it."""

from __future__ import annotations

import pytest

from tests.e2e.browser.pages import FROZEN, Lab

pytestmark = pytest.mark.browser

#: The name of the tool whose card shows `img`, outside the card's fold; null otherwise.
CARD_OF = """
(img) => {
  if (img.closest('details')) return null;
  const card = img.parentElement && img.parentElement.parentElement;
  const name = card && card.querySelector(':scope > details > summary b');
  return name ? name.textContent : null;
}
"""


def test_the_agents_plot_shows_once_beside_its_card(page: Lab):
    pytest.importorskip("matplotlib")
    lab = page.open("elelem_kernel.ipynb", "images")
    lab.run("/mode auto")
    cell = lab.turn("plot the squares")
    frozen = cell.locator(FROZEN)
    plots = cell.locator(".jp-OutputArea-output img")
    assert plots.count() == 1, "the plot is shown once, in its tool card"
    box = plots.first.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 150
    assert plots.first.evaluate(CARD_OF) == "python"  # beside its call, the card folded
    footer = frozen.get_by_text("rounds", exact=False).last.bounding_box()
    assert footer is not None and box["y"] < footer["y"]  # above the footer, not under it
    text = frozen.inner_text()
    assert "I received an image from python" in text.replace("`", "")
    lab.shot("images-plot", cell)
    assert lab.widget_errors() == 0
