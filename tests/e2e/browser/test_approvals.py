"""Approve and decline a write call with the tool card's buttons (issue 8, scenario 4).

The demo model asks to write a file; the card shows what will run and Allow / Deny /
Always buttons while the cell is still running (the click reaches the kernel on a comm
subshell). The waiting card is also photographed in the dark theme.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN, Lab

pytestmark = pytest.mark.browser


def buttons(cell, label: str):
    return cell.locator(".elelem-card").get_by_role("button", name=label, exact=True)


def test_allow_and_deny_with_the_card_buttons(page: Lab, lab_root):
    name = write_notebook(
        lab_root / "approvals.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem\nwrite the file approved.md",
            "%%elelem\nwrite the file declined.md",
        ],
    )
    lab = page.open(name, "approvals")
    lab.run("%load_ext elelem_kernel")

    cell = lab.start("write the file approved.md")
    allow = buttons(cell, "Allow")
    allow.wait_for()
    assert buttons(cell, "Deny").count() == 1
    assert "approved.md" in cell.locator(".elelem-card").inner_text()
    lab.shot("4-approval-waiting-light", cell)
    try:
        lab.theme("JupyterLab Dark")
        lab.shot("4-approval-waiting-dark", cell)
    finally:
        lab.theme("JupyterLab Light")
    allow.click()
    lab.wait_done(cell)
    frozen = cell.locator(FROZEN)
    frozen.wait_for()
    assert "✓ ok" in frozen.inner_text()
    assert (lab_root / "approved.md").is_file()
    lab.shot("4-approval-allowed", cell)

    cell = lab.start("write the file declined.md")
    deny = buttons(cell, "Deny")
    deny.wait_for()
    deny.click()
    lab.wait_done(cell)
    frozen = cell.locator(FROZEN)
    frozen.wait_for()
    assert "declined" in frozen.inner_text()
    assert not (lab_root / "declined.md").exists()
    lab.shot("4-approval-denied", cell)
