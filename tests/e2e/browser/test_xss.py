"""Markup from the model or a tool executes nothing (issue 8, scenario 6).

A tool result (a file the agent reads) and the reply both carry `<img onerror>` and
`<script>`; the live view, the frozen output, and the frozen output reloaded from the
saved file must show them as text. Any dialog or matching console error fails the test.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN, Lab
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser

TOOL = "<img src=x onerror=\"alert('xss-tool')\"><script>alert('xss-tool-script')</script>"
REPLY = (
    "Found it: <img src=x onerror=\"alert('xss-reply')\"> and "
    "<script>alert('xss-reply-script')</script> and <b onmouseover=alert('xss-b')>bold</b>."
)


def test_markup_in_replies_and_results_stays_text(page: Lab, wire, lab_root):
    (lab_root / "payload.md").write_text(f"# Payload\n\n{TOOL}\n")
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(thinking=TOOL, calls=[("read", {"path": "payload.md"})])),
        reply("openai", Round(text=REPLY)),
    )
    name = write_notebook(
        lab_root / "xss.ipynb", ["%load_ext elelem_kernel", "%%elelem -p openai\nread payload.md"]
    )
    lab = page.open(name, "xss")
    lab.run("%load_ext elelem_kernel")
    cell = lab.run("read payload.md", watch=True)
    frozen = cell.locator(FROZEN)
    frozen.wait_for()
    assert lab.seen()["injected"] == [], "markup became live elements in the live view"
    for summary in frozen.locator("details > summary").all():
        summary.click()
    text = frozen.inner_text()
    assert "alert('xss-tool')" in text, "the tool result shows the markup as text"
    assert "alert('xss-reply')" in text, "the reply shows the markup as text"
    assert cell.locator(".jp-OutputArea img, .jp-OutputArea script").count() == 0
    lab.shot("6-xss-frozen", cell)

    lab.save()
    lab.reload()
    cell = lab.cell("read payload.md")
    cell.locator(FROZEN).wait_for()
    assert cell.locator(".jp-OutputArea img, .jp-OutputArea script").count() == 0
    assert lab.dialogs == []
    assert [e for e in lab.console_errors if "xss" in e] == []
