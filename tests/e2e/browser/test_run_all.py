"""A person's first visit: restart and run all of quickstart.ipynb, answering the approval.

Every cell runs in the real frontend in order (magic, memory, shared namespace, slash
commands), the write call waits for a click on Allow, and no cell ends in an error.
"""

from __future__ import annotations

import re
import shutil

import pytest

from tests.e2e.browser.pages import FROZEN, Lab

pytestmark = pytest.mark.browser

ERRORS = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"


def test_restart_and_run_all_of_the_quickstart(page: Lab, lab_root):
    shutil.copy(lab_root / "quickstart.ipynb", lab_root / "quickstart_all.ipynb")
    lab = page.open("quickstart_all.ipynb", "run-all")
    lab.toolbar("notebook:restart-run-all").click()
    lab.page.locator(".jp-Dialog .jp-mod-accept").click()

    write = lab.cell("write the file notes.md")
    allow = write.locator(".elelem-card").get_by_role("button", name="Allow", exact=True)
    allow.wait_for(timeout=120_000)
    allow.click()
    lab.wait_done(write)
    write.locator(FROZEN).wait_for()
    assert "✓" in write.locator(FROZEN).inner_text()
    assert (lab_root / "notes.md").is_file()

    assert lab.page.locator(ERRORS).count() == 0
    # text, not innerText: the cell is far above the view, and Lab's content-visibility
    # windowing may leave it unrendered, which innerText reports as ""
    total = lab.cell(re.compile(r"^total$")).locator(".jp-OutputArea-output").last
    assert (total.text_content() or "").strip() == "40.3"
    assert lab.widget_errors() == 0
    lab.page.locator(".jp-NotebookPanel .jp-Notebook").first.press("Control+Home")
    lab.shot("9-run-all-page")


def test_restart_and_run_all_of_the_elelem_kernel_notebook(page: Lab, lab_root):
    shutil.copy(lab_root / "elelem_kernel.ipynb", lab_root / "elelem_kernel_all.ipynb")
    lab = page.open("elelem_kernel_all.ipynb", "run-all-elelem")
    lab.toolbar("notebook:restart-run-all").click()
    lab.page.locator(".jp-Dialog .jp-mod-accept").click()

    last = lab.cell(re.compile(r"^%%py\s*biggest$"))
    last.get_by_text("Lagos").wait_for(timeout=120_000)
    lab.wait_done(last)
    assert lab.page.locator(ERRORS).count() == 0
    # Lab renders the outputs of cells far above the view a moment later on a loaded
    # machine: wait for each to be attached, then count
    help_table = lab.cell("/help").locator("table")
    help_table.first.wait_for(state="attached")
    assert help_table.count() == 1
    computed = lab.cell("compute in python").locator(FROZEN)
    computed.first.wait_for(state="attached")
    assert computed.count() == 1
    assert lab.widget_errors() == 0
    first = lab.cell("what is in this folder?").locator(FROZEN).inner_text()
    second = lab.cell("which of those files").locator(FROZEN).inner_text()
    assert "This is turn" not in first, "a re-run from the top sees only the turns above it"
    assert "This is turn 2 of our conversation" in second
    lab.shot("9-run-all-elelem-kernel-page")
