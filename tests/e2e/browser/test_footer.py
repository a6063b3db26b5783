"""The footer a person reads under each turn: tokens, time, rounds, stop, model and cost.

A model with a known price at its official endpoint shows dollars (the footer's words are
tested in tests/render); a model on another server, whatever its name, says "cost unknown"
instead of guessing, and the footer names the model the server said answered.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN, Lab
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser


def footer(cell) -> str:
    return cell.locator(FROZEN).inner_text().strip().splitlines()[-1]


def test_footer_shows_tokens_and_cost(page: Lab, wire, lab_root):
    wire.requests.clear()
    usage = {"input": 1200, "output": 300}
    wire.queue(
        reply("openai", Round(text="Not priced here.", usage=usage, model="smollm2")),
        reply("openai", Round(text="Not priced.", usage=usage, model="mystery-model-1")),
    )
    name = write_notebook(
        lab_root / "footer.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai --model gpt-4.1\nhow much?",
            "%%elelem -p openai --model mystery-model-1\nand now?",
        ],
    )
    lab = page.open(name, "footer")
    lab.run("%load_ext elelem_kernel")
    local = lab.run("how much?")
    local.locator(FROZEN).wait_for()
    line = footer(local)
    assert re.search(r"in 1,200 · out 300\b", line), line
    # gpt-4.1 was asked for, but a local server answered with its own model: not OpenAI's price
    assert "openai/smollm2" in line and "$" not in line and "cost unknown" in line, line
    lab.shot("10-footer-local-model", local)

    unknown = lab.run("and now?")
    unknown.locator(FROZEN).wait_for()
    line = footer(unknown)
    assert "mystery-model-1" in line and "$" not in line
    assert "cost unknown" in line, line
    lab.shot("10-footer-unknown-model", unknown)
