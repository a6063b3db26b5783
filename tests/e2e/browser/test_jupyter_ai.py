"""@Elelem in jupyter-ai 3's chat, in Chromium: the persona answers with the demo model, its
tool call shows with the diff, and the permission request is answered in the chat.

jupyter-ai 3 pins `mcp<2`, so it lives in a venv of its own (`scripts/jupyter_ai_venv.sh`,
which `scripts/setup.sh test` runs), with this package installed editable beside it. The
JupyterLab server runs from that venv; nothing is configured: the persona comes from
elelem-kernel's `jupyter_ai.personas` entry point.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser.lab import REPO, LabServer, jupyter_env

# 600 s: a module's first test also waits for the JupyterLab it starts, slow on a loaded machine
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

AI_PYTHON = REPO / ".cache" / "jupyter-ai-venv" / "bin" / "python"
WAIT = 180_000  # ms: the chat starts the agent process and its first turn on a loaded machine


def saved_sessions(folder: Path, timeout: float = 60) -> list[Path]:
    """The session notebooks in `folder`, once the agent wrote one (after its turn ended)."""
    deadline = time.monotonic() + timeout
    while not list(folder.glob("*.ipynb")) and time.monotonic() < deadline:
        time.sleep(0.2)  # polling for a file another process writes, not timing it
    return list(folder.glob("*.ipynb"))


class JupyterAiLab(LabServer):
    """JupyterLab run by the jupyter-ai venv's Python."""

    def command(self) -> list[str]:
        return [str(AI_PYTHON), *super().command()[1:]]


@pytest.fixture
def ai_lab(chromium: str, tmp_path: Path, shots: Path) -> Iterator[JupyterAiLab]:
    if not AI_PYTHON.exists():
        why = f"{AI_PYTHON} is missing: run `bash scripts/jupyter_ai_venv.sh` (setup.sh test does)"
        if os.environ.get("ELELEM_REQUIRE_BROWSER") or os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    root = tmp_path / "root"
    root.mkdir()
    env = jupyter_env(
        tmp_path / "jupyter",
        ELELEM_ACP_SESSIONS=str(tmp_path / "sessions"),
        ELELEM_DEMO_DELAY="0.01",
    )
    env["PATH"] = f"{AI_PYTHON.parent}{os.pathsep}{env.get('PATH', '')}"
    server = JupyterAiLab(root, env, shots / "jupyter-ai-lab.log").start(timeout=180)
    yield server
    server.stop()


def test_elelem_answers_in_the_chat_and_asks_there_before_writing(ai_lab, browser, shots):
    ai_lab.api("PUT", "/api/contents/talk.chat", {"type": "file", "format": "text", "content": ""})
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{ai_lab.url}/lab/tree/talk.chat?token={ai_lab.token}")
        box = page.get_by_placeholder("Type a chat message")
        box.wait_for(timeout=WAIT)
        page.get_by_text("Elelem", exact=True).first.wait_for(timeout=WAIT)  # the persona
        box.click()
        page.keyboard.type("@Elelem please write a file")
        page.keyboard.press("Enter")

        allow = page.get_by_role("button", name="Allow once")
        allow.wait_for(timeout=WAIT)
        for name in ("Allow always", "Reject"):
            assert page.get_by_role("button", name=name).is_visible()
        shown = page.inner_text("body")
        assert "write demo_notes.md" in shown  # the tool call, titled
        assert "+ # Notes" in shown  # its diff, before anything is written
        assert not (ai_lab.root / "demo_notes.md").exists()
        page.screenshot(path=str(shots / "jupyter-ai-permission.png"))

        allow.click()
        page.get_by_text("I wrote demo_notes.md", exact=False).wait_for(timeout=WAIT)
        page.get_by_text("Elelem is typing").wait_for(state="hidden", timeout=WAIT)
        page.screenshot(path=str(shots / "jupyter-ai-answer.png"))
    finally:
        context.close()
    assert (ai_lab.root / "demo_notes.md").read_text().startswith("# Notes")
    [saved] = saved_sessions(ai_lab.root.parent / "sessions")
    record = json.loads(saved.read_text())["cells"][-1]["outputs"][0]["metadata"]["elelem"]
    assert "please write a file" in record["prompt"]
    assert record["rounds"][0]["calls"][0]["name"] == "write"
