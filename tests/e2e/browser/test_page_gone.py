"""A page reloaded or closed while a turn waits for a click (issue 36 item 2).

The turn waits for Allow / Deny in a card, or for Accept / Reject on a diff in a cell. The
page goes away (reloaded, or its window closed and the notebook opened again): its buttons
are gone with it, and while the turn holds the kernel's main shell the new page shows the
kernel as "Unknown" and a saved live view as "Loading widget…". The kernel notices within
seconds that the page which answered its pings no longer does: the question ends declined,
saying why, the turn ends, the kernel is idle again, and the new page shows the frozen turn
with that reason in place of the saved live view (no "Error displaying widget").
The other way round, the kernel restarted while a diff or an approval waits: the page
takes the diff box away, for no turn is left to hear the click, and says in the turn's
cell that it ended unfinished, in place of its dead live view. In JupyterLab and Notebook 7.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.lab import LabServer, NotebookServer, extension_env, write_notebook
from tests.e2e.browser.pages import BUSY_WAIT, FROZEN, KERNEL_READY, LIVE, Lab, opened
from tests.wire_servers import Round, reply

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

GONE = "was closed or reloaded"
OUTPUTS = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index).outputs.toJSON()
"""
SOURCE = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index)
  .sharedModel.getSource()
"""


@pytest.fixture(scope="module", params=["lab", "notebook7"])
def server(request, shots, wire, tmp_path_factory) -> Iterator[LabServer]:
    if request.param == "notebook7":
        pytest.importorskip("notebook", reason="Notebook 7 tests need `pip install notebook`")
    root = tmp_path_factory.mktemp(f"gone-{request.param}")
    env = extension_env(tmp_path_factory.mktemp("jupyter-gone"), wire, enabled=True)
    kind = NotebookServer if request.param == "notebook7" else LabServer
    started = kind(root, env, shots / f"page-gone-{request.param}.log").start()
    started.kind = request.param  # type: ignore[attr-defined]
    yield started
    started.stop()


def back_again(lab: Lab, cell_text: str, shot: str) -> tuple[object, float]:
    """The page just (re)opened on the busy kernel: wait for the kernel to be idle again and
    the turn's frozen output in the cell; that cell, and the seconds it took."""
    began = time.monotonic()
    lab.page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=BUSY_WAIT)
    lab.page.wait_for_function(KERNEL_READY, timeout=60_000)
    took = time.monotonic() - began
    cell = lab.cell(cell_text)
    frozen = cell.locator(FROZEN)
    frozen.wait_for(timeout=30_000)
    lab.shot(shot, cell)
    assert GONE in (frozen.text_content() or "")  # in the declined card, folded
    assert lab.widget_errors() == 0
    return cell, took


def reload(lab: Lab) -> None:
    """Reload the page as a person does: Notebook 7 asks whether to leave a notebook whose
    live view changed since the save, and the person says yes."""
    lab.leave_when_asked()
    lab.page.reload()


def wait_for_allow(lab: Lab, text: str) -> None:
    cell = lab.start(text)
    card = cell.locator(".elelem-card")
    card.get_by_role("button", name="Allow", exact=True).wait_for(timeout=BUSY_WAIT)
    lab.save()  # the file now holds the live view: a reloaded page shows it "Loading…"


def approval_notebook(server, stem: str) -> tuple[str, str]:
    """A notebook whose prompt asks to write the file `stem`.md (the demo model asks
    before it writes); its name and the prompt's text."""
    prompt = f"write the file {stem}.md"
    name = write_notebook(
        Path(server.root) / f"{stem}-approval.ipynb",
        ["%load_ext elelem_kernel", f"%%elelem\n{prompt}"],
    )
    return name, prompt


def assert_unfinished(lab: Lab, turn: Any, index: int) -> None:
    """The turn's cell (the `index`th) says it ended unfinished, in place of its live
    view: gone from the page and from what a save would write."""
    turn.get_by_text("the kernel stopped before this turn ended").wait_for(timeout=10_000)
    assert turn.locator(LIVE).count() == 0 and lab.widget_errors() == 0
    assert "widget-view" not in json.dumps(lab.page.evaluate(OUTPUTS, index))


def test_an_approval_whose_page_reloads_ends_declined(browser, server, shots):
    root = Path(server.root)
    name, prompt = approval_notebook(server, "reloaded")
    tag = server.kind
    with opened(browser, server, shots, name, f"gone-approval-{tag}") as lab:
        lab.run("%load_ext elelem_kernel")
        wait_for_allow(lab, prompt)
        reload(lab)
        _, took = back_again(lab, prompt, f"36-2-{tag}-approval-reloaded")
        assert took < 30, f"the kernel was busy {took:.0f} s after the reload"
        assert not (root / "reloaded.md").exists()


def test_an_approval_whose_page_closes_ends_declined(browser, server, shots):
    root = Path(server.root)
    name, prompt = approval_notebook(server, "closed")
    tag = server.kind
    first = Lab.in_new_context(browser, server, shots)
    try:
        first.open(name, f"gone-close-{tag}")
        first.run("%load_ext elelem_kernel")
        wait_for_allow(first, prompt)
    finally:
        first.page.context.close()
    with opened(browser, server, shots, name, f"gone-close-{tag}") as lab:
        back_again(lab, prompt, f"36-2-{tag}-approval-closed")
        assert not (root / "closed.md").exists()


def fix_notebook(server, wire, file: str, last_words: str) -> str:
    """A notebook whose cell 1 fails and whose prompt has the model propose a fix to it
    (then say `last_words`); its name."""
    name = write_notebook(
        Path(server.root) / file,
        ["%load_ext elelem_kernel", "x = 1/0", "%%elelem -p openai\nfix the cell that failed"],
    )
    wire.requests.clear()
    wire.queue(
        reply(
            "openai",
            Round(calls=[("notebook_edit", {"cell": 1, "old": "1/0", "new": "1/1"}, "edit-1")]),
        ),
        reply("openai", Round(text=last_words)),
    )
    return name


def wait_for_diff(lab: Lab) -> Any:
    """Load elelem, start the fix turn; the diff box, once it is on the failing cell."""
    lab.run("%load_ext elelem_kernel")
    lab.start("fix the cell that failed")
    box = lab.cell("x = 1/0").locator(".elelem-proposal")
    box.wait_for(timeout=BUSY_WAIT)
    return box


def test_a_diff_whose_page_reloads_ends_declined(browser, server, wire, shots):
    name = fix_notebook(server, wire, "reload-diff.ipynb", "The page went away; nothing changed.")
    tag = server.kind
    with opened(browser, server, shots, name, f"gone-diff-{tag}") as lab:
        wait_for_diff(lab)
        lab.save()
        reload(lab)
        _, took = back_again(lab, "fix the cell that failed", f"36-2-{tag}-diff-reloaded")
        assert took < 30, f"the kernel was busy {took:.0f} s after the reload"
        assert lab.page.evaluate(SOURCE, 1) == "x = 1/0"
    tools = [m for m in wire.requests[-1].body["messages"] if m["role"] == "tool"]
    assert GONE in tools[-1]["content"]


def test_a_diff_whose_kernel_restarts_is_taken_away(browser, server, wire, shots):
    name = fix_notebook(server, wire, "restart-diff.ipynb", "unused: the kernel restarts first")
    tag = server.kind
    with opened(browser, server, shots, name, f"restart-diff-{tag}") as lab:
        box = wait_for_diff(lab)
        lab.restart()
        box.wait_for(state="detached", timeout=10_000)
        assert_unfinished(lab, lab.cell("fix the cell that failed"), 2)
        lab.shot(f"36-2-{tag}-diff-restarted", lab.page.locator(".jp-NotebookPanel").first)
        assert lab.page.locator(".elelem-proposal, .elelem-waiting").count() == 0
        assert lab.page.evaluate(SOURCE, 1) == "x = 1/0"
    wire.clear()


def test_an_approval_whose_kernel_restarts_ends_unfinished(browser, server, shots):
    root = Path(server.root)
    name, prompt = approval_notebook(server, "restarted")
    tag = server.kind
    with opened(browser, server, shots, name, f"restart-approval-{tag}") as lab:
        lab.run("%load_ext elelem_kernel")
        wait_for_allow(lab, prompt)
        lab.restart()
        assert_unfinished(lab, lab.cell(prompt), 1)
        lab.shot(f"36-2-{tag}-approval-restarted", lab.cell(prompt))
    assert not (root / "restarted.md").exists()
