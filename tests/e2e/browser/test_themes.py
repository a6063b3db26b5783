"""What a person sees: the committed quickstart's frozen turns in the light and dark themes.

Screenshots only need to exist and show the turns; looking at them is a person's job
(test-artifacts/browser/7-*.png).
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.pages import FROZEN, Lab

pytestmark = pytest.mark.browser


def test_frozen_turns_in_light_and_dark(page: Lab):
    lab = page.open("quickstart.ipynb", "themes")
    first = lab.cell("what is in this folder?")
    first.locator(FROZEN).wait_for()
    first.locator(FROZEN).locator("details > summary").nth(1).click()
    python = lab.cell("compute the total population")
    declined = lab.cell("write the file notes.md")
    assert lab.widget_errors() == 0
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            lab.theme(theme)
            tag = "light" if "Light" in theme else "dark"
            lab.shot(f"7-quickstart-ask-{tag}", first)
            lab.shot(f"7-quickstart-python-{tag}", python)
            lab.shot(f"7-quickstart-declined-{tag}", declined)
    finally:
        lab.theme("JupyterLab Light")


def test_reopened_turns_keep_their_look(page: Lab):
    """A notebook opened from disk is untrusted: its frozen turns still show frames and colours."""
    lab = page.open("quickstart.ipynb", "reopened")
    frozen = lab.cell("what is in this folder?").locator(FROZEN)
    frozen.wait_for()
    card = frozen.locator("details:has(> summary b)").first
    assert "border:" in (card.get_attribute("style") or ""), "the tool card lost its frame"
    summary = card.locator("summary").first.inner_html()
    assert "color:" in summary, "the state (✓ ok) lost its colour"
    result = card.locator("pre").last
    assert "background:" in (result.get_attribute("style") or ""), "the result lost its background"


def test_code_review_findings_in_light_and_dark(page: Lab):
    """The committed code review's findings (a Python result and a %%elelem review turn)."""
    lab = page.open("code_review.ipynb", "review-themes")
    report = lab.cell('result = review("HEAD~1..HEAD"')
    turn = lab.cell("%%elelem review")
    turn.locator(FROZEN).wait_for()
    assert lab.widget_errors() == 0
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            lab.theme(theme)
            tag = "light" if "Light" in theme else "dark"
            lab.shot(f"11-review-report-{tag}", report)
            lab.shot(f"11-review-turn-{tag}", turn)
    finally:
        lab.theme("JupyterLab Light")
