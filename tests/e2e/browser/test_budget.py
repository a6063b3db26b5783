"""A budget as a person sees it in JupyterLab: the footer's `spent of budget`, live and
frozen, and a turn stopped before its request with the line saying how to raise it.

Token budgets, so what is shown does not depend on which endpoints have prices."""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN, Lab
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser

#: Records every text the live view's footer showed, until the cell freezes.
WATCH_FOOTER = """
(cell) => {
  window.__elelemFooters = [];
  const look = () => {
    const live = cell.querySelector('.jupyter-widgets.elelem-turn');
    if (live) window.__elelemFooters.push(live.textContent);
  };
  new MutationObserver(look).observe(
    cell, {subtree: true, childList: true, characterData: true, attributes: true});
}
"""


def test_the_footer_shows_the_budget_and_a_stop_says_how_to_raise_it(page: Lab, wire, lab_root):
    wire.requests.clear()
    wire.queue(reply("openai", Round(text="Within budget.", usage={"input": 1200, "output": 300})))
    name = write_notebook(
        lab_root / "budget.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai --budget '100k tokens'\nhow much?",
            "%%elelem -p openai --budget '500 tokens/turn'\ntoo much?",
        ],
    )
    lab = page.open(name, "budget")
    lab.run("%load_ext elelem_kernel")
    cell = lab.cell("how much?")
    cell.evaluate(WATCH_FOOTER)
    lab.run("how much?")
    cell.locator(FROZEN).wait_for()
    frozen = cell.locator(FROZEN).inner_text().strip().splitlines()[-1]
    assert re.search(r"in 1,200 · out 300\b.* · 1\.5k of 100k tokens$", frozen), frozen
    live = lab.page.evaluate("() => window.__elelemFooters")
    assert any("1.5k of 100k tokens" in text for text in live), live[-3:]
    lab.shot("budget-footer", cell)

    stopped = lab.run("too much?")
    stopped.locator(FROZEN).wait_for()
    text = stopped.locator(FROZEN).inner_text()
    assert "budget: this turn spent 0 tokens of 500 tokens/turn" in text
    assert re.search(r"raise it: %%elelem --budget '[\d.]+k tokens/turn' \(this cell\)", text)
    last = text.strip().splitlines()[-1]
    assert re.search(
        r"0 rounds · budget · openai/\S+ · cost unknown · 0 of 500 tokens/turn$", last
    ), last
    assert len(wire.requests) == 1  # the stopped turn sent nothing
    lab.shot("budget-stop", stopped)
