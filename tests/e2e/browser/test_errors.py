"""Error cells a person can act on: a missing key, an unreachable server (issue 8, polish).

The turn freezes with the error in place of a reply: which variable to set, with the
provider's name; which host could not be reached. No traceback, and the kernel stays
usable for the next cell.
"""

from __future__ import annotations

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN, Lab

pytestmark = pytest.mark.browser


def test_missing_key_and_network_down_say_what_to_do(page: Lab, lab_root):
    name = write_notebook(
        lab_root / "errors.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p anthropic\nhello",
            "%env OLLAMA_HOST=http://127.0.0.1:9",
            "%%elelem -p ollama --model llama3.2\nhello",
        ],
    )
    lab = page.open(name, "errors")
    lab.run("%load_ext elelem_kernel")

    keyless = lab.run("%%elelem -p anthropic")
    keyless.locator(FROZEN).wait_for()
    text = keyless.locator(".jp-OutputArea").inner_text()
    assert "anthropic" in text and "ANTHROPIC_API_KEY" in text
    assert "Traceback" not in text
    lab.shot("8-error-missing-key", keyless)

    lab.run("%env OLLAMA_HOST")
    offline = lab.run("%%elelem -p ollama")
    offline.locator(FROZEN).wait_for()
    text = offline.locator(".jp-OutputArea").inner_text()
    assert "127.0.0.1:9" in text
    assert "Traceback" not in text
    lab.shot("8-error-network-down", offline)
