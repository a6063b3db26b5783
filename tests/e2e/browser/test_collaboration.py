"""Real-time collaboration (issue 36 item 9): two people on one notebook with
jupyter-collaboration, in two browser contexts of one JupyterLab.

jupyter-collaboration makes every notebook a shared document, so it lives in a venv of its
own (`scripts/rtc_venv.sh`, which `scripts/setup.sh test` runs) with this package installed
editable beside it; the server runs from that venv. Person A asks elelem to fix a failing
cell: the diff box shows on A's page only, B sees the accepted edit and the run's output
arrive live, and B's page never offers buttons for A's turn.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser.lab import REPO, LabServer, NotebookServer, extension_env, write_notebook
from tests.e2e.browser.pages import FROZEN, Lab
from tests.wire_servers import Round, reply

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

RTC_PYTHON = REPO / ".cache" / "rtc-venv" / "bin" / "python"
SOURCE = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index)
  .sharedModel.getSource()
"""
COLLABORATIVE = "() => window.jupyterapp.hasPlugin('@jupyter/docprovider-extension:ynotebook')"


class CollaborationLab(LabServer):
    """JupyterLab run by the rtc venv's Python (jupyter-collaboration installed)."""

    def command(self) -> list[str]:
        return [str(RTC_PYTHON), *super().command()[1:]]


class CollaborationNotebook(NotebookServer):
    """Notebook 7 run by the rtc venv's Python."""

    def command(self) -> list[str]:
        return [str(RTC_PYTHON), *super().command()[1:]]


@pytest.fixture(params=["lab", "notebook7"])
def rtc_lab(request, chromium: str, tmp_path: Path, shots: Path, wire) -> Iterator[LabServer]:
    if not RTC_PYTHON.exists():
        why = f"{RTC_PYTHON} is missing: run `bash scripts/rtc_venv.sh` (setup.sh test does)"
        if os.environ.get("ELELEM_REQUIRE_BROWSER") or os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    root = tmp_path / "root"
    root.mkdir()
    env = extension_env(tmp_path / "jupyter", wire, enabled=True)
    env["PATH"] = f"{RTC_PYTHON.parent}{os.pathsep}{env.get('PATH', '')}"
    kind = CollaborationNotebook if request.param == "notebook7" else CollaborationLab
    server = kind(root, env, shots / f"rtc-{request.param}.log").start(timeout=180)
    server.kind = request.param  # type: ignore[attr-defined]
    yield server
    server.stop()


def cell_source(lab: Lab, index: int) -> str:
    return lab.page.evaluate(SOURCE, index)


def test_only_the_person_whose_turn_it_is_decides_and_both_see_the_result(
    rtc_lab, browser, wire, shots
):
    name = write_notebook(
        rtc_lab.root / "shared.ipynb",
        [
            "%load_ext elelem_kernel\n%elelem /provider openai",
            "total = sum([1, 2]) / 0\nprint(total)",
            "%%elelem\nfix the failing cell",
            "%%elelem --mode verify\nrun it",
        ],
    )
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(calls=[("notebook_read", {}, "read-1")])),
        reply(
            "openai",
            Round(calls=[("notebook_edit", {"cell": 1, "old": " / 0", "new": ""}, "edit-1")]),
        ),
        reply("openai", Round(text="Fixed the cell: it no longer divides by zero.")),
        reply("openai", Round(calls=[("notebook_run", {"cells": [1]}, "run-1")])),
        reply("openai", Round(text="It ran: total is 3.")),
    )
    tag = rtc_lab.kind
    a = Lab.in_new_context(browser, rtc_lab, shots).open(name, "rtc-a")
    b = Lab.in_new_context(browser, rtc_lab, shots).open(name, "rtc-b")
    try:
        assert a.page.evaluate(COLLABORATIVE), "jupyter-collaboration's plugins are loaded"
        a.run("%load_ext elelem_kernel")
        a.run("total = sum")
        turn = a.start("fix the failing")
        box = a.cell("total = sum").locator(".elelem-proposal")
        box.wait_for(timeout=120_000)
        a.shot(f"36-rtc-{tag}-a-diff")
        # B sees the turn running, not the diff box or its buttons
        live = b.cell("fix the failing").locator(".jp-OutputArea-output").first
        live.wait_for()
        assert live.inner_text().startswith("elelem is working on this turn")  # not a repr
        assert b.page.locator(".elelem-proposal").count() == 0
        assert b.page.get_by_role("button", name="Accept").count() == 0
        assert cell_source(b, 1) == "total = sum([1, 2]) / 0\nprint(total)"
        b.shot(f"36-rtc-{tag}-b-while-a-decides")
        box.get_by_role("button", name="Accept").first.click()
        # the accepted edit reaches B live, while A's turn goes on
        b.page.wait_for_function(
            f"() => ({SOURCE})(1) === 'total = sum([1, 2])\\nprint(total)'", timeout=60_000
        )
        a.wait_done(turn)
        turn.locator(FROZEN).wait_for()
        turn = a.start("run it")
        allow = turn.locator(".elelem-card").get_by_role("button", name="Allow", exact=True)
        allow.wait_for(timeout=120_000)  # notebook_run asks A first; B gets no button
        assert b.page.get_by_role("button", name="Allow", exact=True).count() == 0
        a.shot(f"36-rtc-{tag}-a-run-approval")
        allow.click()
        a.wait_done(turn)
        turn.locator(FROZEN).wait_for()
        # the run's output replaced the error, for both
        for lab in (a, b):
            output = lab.cell("total = sum").locator(".jp-OutputArea").first
            lab.page.wait_for_function(
                "(el) => el.textContent.trim() === '3'", arg=output.element_handle()
            )
        for prompt, said in (("fix the failing", "Fixed the cell"), ("run it", "total is 3")):
            b.cell(prompt).locator(FROZEN).wait_for(timeout=60_000)
            assert said in b.cell(prompt).inner_text()
        a.shot(f"36-rtc-{tag}-a-done")
        b.shot(f"36-rtc-{tag}-b-done")
        assert "Error displaying widget" not in b.page.inner_text("body")
    finally:
        a.page.context.close()
        b.page.context.close()
