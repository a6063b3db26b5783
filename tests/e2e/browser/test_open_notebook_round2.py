"""The open notebook, round 2 (issue 36 items 4, 5, 6 and 8), in JupyterLab and Notebook 7.

A cell fails; its error output offers "Fix with elelem", which adds and runs a prompt cell
below it. The scripted model reads the open notebook (a plot in its outputs reaches the
model as an image; the card shows a summary, not JSON), then proposes the fix as a diff.
While the diff waits, the turn's card says "waiting for you: cell [N] above" with a link
to it and Accept all / Reject all, and the footer's clock keeps going. Finished cards are
folded live as they are frozen, so nothing opens or closes when the turn ends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser.lab import LabServer, NotebookServer, extension_env, write_notebook
from tests.e2e.browser.pages import FROZEN, opened
from tests.wire_servers import Round, reply

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

SOURCE = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index)
  .sharedModel.getSource()
"""
#: Result texts of tool cards shown on the page (not inside a folded <details>).
OPEN_RESULTS = """
(cell) => Array.from(cell.querySelectorAll('.elelem-card pre, .elelem-turn pre'))
  .filter(pre => pre.offsetParent !== null && !pre.closest('details:not([open])')).length
"""
IN_VIEW = """
(el) => { const r = el.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= (window.innerHeight || document.documentElement.clientHeight); }
"""


@pytest.fixture(scope="module", params=["lab", "notebook7"])
def server(request, shots, wire, tmp_path_factory) -> Iterator[LabServer]:
    if request.param == "notebook7":
        pytest.importorskip("notebook", reason="Notebook 7 tests need `pip install notebook`")
    root = tmp_path_factory.mktemp(f"round2-{request.param}")
    env = extension_env(tmp_path_factory.mktemp("jupyter-round2"), wire, enabled=True)
    kind = NotebookServer if request.param == "notebook7" else LabServer
    started = kind(root, env, shots / f"open-round2-{request.param}.log").start()
    started.kind = request.param  # type: ignore[attr-defined]
    yield started
    started.stop()


def test_fix_with_elelem_waits_visibly_and_nothing_jumps(browser, server, wire, shots):
    pytest.importorskip("matplotlib")
    root = Path(server.root)
    name = write_notebook(
        root / "round2.ipynb",
        [
            "%load_ext elelem_kernel\n%elelem /provider openai",
            "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]);",
            "total = sum([1, 2]) / 0",
        ],
    )
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(calls=[("notebook_read", {}, "read-1")])),
        reply(
            "openai",
            Round(calls=[("notebook_edit", {"cell": 2, "old": " / 0", "new": ""}, "edit-1")]),
        ),
        reply("openai", Round(text="Fixed cell [3]: it no longer divides by zero.")),
    )
    tag = server.kind
    with opened(browser, server, shots, name, f"round2-{tag}") as lab:
        lab.run("%load_ext elelem_kernel")  # and the scripted model for the session
        lab.run("plt.plot")
        failing = lab.run("total = sum")
        fix = failing.locator(".elelem-fix")
        fix.wait_for(timeout=30_000)  # item 8: the action on the error output
        assert fix.inner_text() == "Fix with elelem"
        lab.shot(f"36-{tag}-fix-offered", failing)
        fix.click()

        turn = lab.cell("%%elelem")
        waiting = turn.locator(".elelem-waiting")
        waiting.wait_for(timeout=120_000)
        label = re.search(r"\[(\d+)\]", failing.locator(".jp-InputPrompt").first.inner_text())
        assert label, "the failing cell shows its count"
        shown_as = f"cell [{label.group(1)}]"
        assert lab.page.evaluate(SOURCE, 3).startswith(f"%%elelem\nFix {shown_as}: it failed")
        assert waiting.inner_text().startswith(f"waiting for you: {shown_as} above")
        header = turn.locator(".elelem-card", has_text="notebook_edit").first.locator(
            ".widget-html"
        )
        said = header.filter(has_text=f"? waiting for you: {shown_as} above").first
        said.wait_for(timeout=30_000)  # the kernel's card header, not only the line under it
        assert "running" not in said.inner_text()
        for which in ("Accept all", "Reject all"):
            tip = waiting.get_by_role("button", name=which).get_attribute("title") or ""
            assert "for the rest of this turn" in tip
        # item 5: the read's card, finished, is folded as the frozen output will show it
        assert turn.evaluate(OPEN_RESULTS) == 0
        # the footer widget's content node (its inner HTML is replaced at each tick)
        footer = turn.locator(".elelem-turn .widget-html-content", has_text="working").last
        before = footer.inner_text()
        lab.page.wait_for_function(
            "([el, was]) => el.textContent !== was", arg=[footer.element_handle(), before]
        )  # the footer's clock goes on while the person is waited for
        lab.shot(f"36-{tag}-waiting-for-you", turn)
        lab.page.mouse.wheel(0, 4000)  # the diff out of sight; the link brings it back
        waiting.locator(".elelem-waiting-link").click()
        box = failing.locator(".elelem-proposal")
        lab.page.wait_for_function(IN_VIEW, arg=box.element_handle())
        lab.shot(f"36-{tag}-link-scrolled", lab.page.locator(".jp-NotebookPanel").first)
        waiting.get_by_role("button", name="Accept all").click()

        lab.wait_done(turn)
        turn.locator(FROZEN).wait_for()
        assert lab.page.evaluate(SOURCE, 2) == "total = sum([1, 2])"
        assert turn.evaluate(OPEN_RESULTS) == 0
        frozen = turn.inner_text()
        assert "Fixed cell [" in frozen
        folded = turn.text_content() or ""  # the read card's summary, in its fold
        assert "4 cells · 1 failing" in folded, folded[:1500]
        assert f"{shown_as}: total = sum([1, 2]) / 0  ✗ ZeroDivisionError" in folded
        assert '"source"' not in folded
        lab.shot(f"36-{tag}-after-turn", turn)

    body = wire.requests[1].body
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    read = json.loads(tools[0]["content"])
    assert read["ok"] is True and any("[image 1]" in str(c.get("outputs")) for c in read["cells"])
    images = [
        part
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]
    assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
