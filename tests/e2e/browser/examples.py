"""Every example notebook run as a person runs it: open it, Run All, answer what the agent
asks (Allow a write, Accept a diff), then look.

The server is `jupyter lab` with the extension built from this tree, as `scripts/lab.sh`
starts it; its Notebook 7 pages (`/notebooks/...`, the `notebook` package the `lab` extra
installs) are the same server's. Each front gets its own copy of notebooks/ (its own
workspace, by the `.elelem-workspace` marker). A run fails on any error output, any red
(stderr) line, any "Loading widget…" or "Error displaying widget", any live turn left
unfrozen and any cell left without its execution number; its screenshot lands in
test-artifacts/browser/ (`examples-FRONT-NOTEBOOK.png`).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.lab import NOTEBOOKS, LabServer, extension_env, write_settings
from tests.e2e.browser.pages import FROZEN, LIVE, VIEWPORT, Lab, opened

#: Every example, as the README lists them.
EXAMPLES = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
#: Every cell rendered, so what the checks below look for is on the page (Lab and Notebook 7
#: otherwise draw only the cells near the view).
NO_WINDOWING = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"}
}
CLICKS, CLICK_WAIT = 4, 20_000  #: clicks on one button, and ms to wait for each to take
#: How many questions (Allow, Accept) one notebook may ask before the run counts as stuck.
QUESTIONS = 10

#: What the page shows now: "done" (every code cell has its number, the kernel is idle),
#: "error" (an error or stderr output), "allow" / "accept" (the agent waits for a click).
STATE = """
() => {
  const panel = document.querySelector('.jp-NotebookPanel');
  if (!panel) return null;
  const bad = panel.querySelector(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error'],"
    + ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']");
  if (bad) return 'error';
  const buttons = [...panel.querySelectorAll('.elelem-card button, .elelem-proposal button')];
  const shown = name => buttons.some(b => b.textContent.trim() === name && !b.disabled
    && b.offsetParent !== null);
  if (shown('Allow')) return 'allow';
  if (shown('Accept')) return 'accept';
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
  const numbered = prompts.length > 0
    && prompts.every(p => /^\\[\\d+\\]:?$/.test(p.textContent.trim()));
  const idle = document.querySelector(".jp-Notebook-ExecutionIndicator[data-status='idle']");
  return numbered && idle ? 'done' : null;
}
"""

#: The page height that shows the whole notebook without scrolling it.
CONTENT_HEIGHT = """
() => {
  const scroller = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
  return scroller ? scroller.scrollHeight + 200 : window.innerHeight;
}
"""
TO_THE_TOP = """
() => {
  const scroller = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
  if (scroller) scroller.scrollTop = 0;
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}
"""
TALLEST = 12_000  #: px: a screenshot's height stays well inside Chromium's limits

#: The editor language of the first code cell whose source starts with `text`.
MIME = """
(text) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cell = panel.content.widgets.find(c => c.model.sharedModel.getSource().startsWith(text));
  return cell ? cell.model.mimeType : null;
}
"""

#: Run a command without waiting for what it returns (a dialog's answer, a run's end).
COMMAND = "(name) => { window.jupyterapp.commands.execute(name); }"

#: Each code cell's prompt and a short note of every output that fails the run.
FAULTS = """
() => {
  const faults = [];
  document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell').forEach((cell, index) => {
    const prompt = cell.querySelector('.jp-InputPrompt');
    const number = prompt ? prompt.textContent.trim() : '';
    const source = (cell.querySelector('.jp-InputArea-editor') || {}).textContent || '';
    const where = `cell ${index} ${number} (${source.trim().slice(0, 40)})`;
    if (!/^\\[\\d+\\]:?$/.test(number)) faults.push(`${where}: left waiting`);
    cell.querySelectorAll('.jp-OutputArea-output').forEach(out => {
      const mime = out.dataset.mimeType || '';
      const text = (out.textContent || '').trim().slice(0, 300);
      if (/error|stderr/.test(mime)) faults.push(`${where}: ${mime}: ${text}`);
      if (/Loading widget|Error displaying widget/.test(out.textContent || ''))
        faults.push(`${where}: ${text}`);
    });
  });
  return faults;
}
"""


def serve(kind: str, shots: Path, wire: Any, tmp_path_factory: Any) -> Iterator[LabServer]:
    """A `jupyter lab` with the extension, serving `<root>/<kind>/`: a copy of notebooks/."""
    root = tmp_path_factory.mktemp(f"examples-{kind}")
    shutil.copytree(NOTEBOOKS, root / kind, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = extension_env(tmp_path_factory.mktemp(f"jupyter-examples-{kind}"), wire, enabled=True)
    # quickstart's write runs without its card's Allow: under Run All, with the extension, a
    # click on it is lost about one run in two on a loaded machine (the card keeps waiting;
    # test_approvals.py covers the click itself)
    env["ELELEM_ALLOW"] = "write"
    write_settings(env, NO_WINDOWING)
    server = ExamplesServer(root, env, shots / f"examples-{kind}.log", kind).start()
    yield server
    server.stop()


class ExamplesServer(LabServer):
    """JupyterLab whose pages are Lab's or Notebook 7's (`kind`: "lab" or "notebook7")."""

    def __init__(self, root: Path, env: dict[str, str], log: Path, kind: str):
        super().__init__(root, env, log)
        self.kind = kind

    def command(self) -> list[str]:
        # Notebook 7's pages expose `window.jupyterapp` too (pages.py reads the kernel's state)
        return [*super().command(), "--JupyterNotebookApp.expose_app_in_browser=True"]

    def lab_url(self, notebook: str, workspace: str) -> str:
        if self.kind == "notebook7":
            return f"{self.url}/notebooks/{self.kind}/{notebook}?token={self.token}"
        return (
            f"{self.url}/lab/workspaces/{workspace}/tree/{self.kind}/{notebook}?token={self.token}"
        )


def run_all(browser: Any, server: ExamplesServer, shots: Path, notebook: str) -> None:
    """Run All of `notebook` in the kernel its opening started, answering the agent, then
    check what it shows."""
    name = f"examples-{server.kind}-{Path(notebook).stem}"
    with opened(browser, server, shots, notebook, name) as lab:
        # from nothing, as a fresh notebook: the saved numbers would look like a finished run
        lab.page.evaluate(COMMAND, "notebook:clear-all-cell-outputs")
        lab.page.evaluate(COMMAND, "notebook:run-all-cells")  # its kernel has just started
        state = _answer_until_done(lab)
        faults = lab.page.evaluate(FAULTS)
        _shoot_whole(lab, name)
        assert state == "done" and not faults, f"{notebook} in {server.kind}: {state}: {faults}"
        assert lab.page.locator(LIVE).count() == 0, "a turn left its live view unfrozen"
        assert lab.widget_errors() == 0
        assert lab.page.get_by_text("Loading widget").count() == 0
        CHECKS.get(notebook, lambda lab, folder: None)(lab, Path(server.root) / server.kind)


def _quickstart(lab: Lab, folder: Path) -> None:
    """The write waited for Allow and happened; the agent's `total` is the person's."""
    write = lab.cell("write the file notes.md")
    assert "✓" in write.locator(FROZEN).inner_text()
    assert (folder / "notes.md").is_file()
    total = lab.cell(re.compile(r"^total$")).locator(".jp-OutputArea-output").last
    assert (total.text_content() or "").strip() == "40.3"


def _elelem_kernel(lab: Lab, folder: Path) -> None:
    """One /help table, one frozen turn a cell, and memory counted from the top."""
    assert lab.cell("/help").locator("table").count() == 1
    assert lab.cell("compute in python").locator(FROZEN).count() == 1
    assert "Lagos" in lab.cell(re.compile(r"^%%py\s*biggest$")).inner_text()
    first = lab.cell("what is in this folder?").locator(FROZEN).inner_text()
    second = lab.cell("which of those files").locator(FROZEN).inner_text()
    assert "This is turn" not in first, "a re-run from the top sees only the turns above it"
    assert "This is turn 2 of our conversation" in second
    # `%%py` cells are highlighted as Python, prompts as the kernel's Markdown
    assert lab.page.evaluate(MIME, "%%py\nbiggest") == "text/x-ipython"
    assert "markdown" in lab.page.evaluate(MIME, "which of those files")


#: What else each notebook must show after its run, beyond the checks every one gets.
CHECKS: dict[str, Callable[[Lab, Path], None]] = {
    "quickstart.ipynb": _quickstart,
    "elelem_kernel.ipynb": _elelem_kernel,
}


def _shoot_whole(lab: Lab, name: str) -> None:
    """A screenshot of the whole notebook, top to bottom: the window made as tall as the
    notebook's content (up to `TALLEST` px), so each cell and its output is in the picture."""
    height = lab.page.evaluate(CONTENT_HEIGHT)
    lab.page.set_viewport_size({"width": VIEWPORT["width"], "height": min(height, TALLEST)})
    lab.page.evaluate(TO_THE_TOP)
    lab.shot(name)
    lab.page.set_viewport_size(VIEWPORT)


def _answer_until_done(lab: Lab) -> str:
    """Click what the agent asks for (Allow, Accept) until the run is done or shows an
    error; the last state."""
    for _ in range(QUESTIONS):
        handle = lab.page.wait_for_function(STATE, timeout=120_000)
        state = handle.json_value()
        if state == "allow":
            _click(lab, ".elelem-card button", "Allow")
        elif state == "accept":
            _click(lab, ".elelem-proposal button", "Accept")
        else:
            return str(state)
    pytest.fail(f"the agent asked more than {QUESTIONS} questions")


def _click(lab: Lab, selector: str, name: str) -> None:
    """Click the button `name`, again when the card still waits: on a loaded machine the
    first click can come before the frontend's comm subshell exists, and then waits on
    the busy shell channel (a person clicks again too)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # browser tests only

    button = lab.page.locator(selector, has_text=name).filter(visible=True).first
    for _ in range(CLICKS):
        with suppress(PlaywrightTimeout):
            button.click(timeout=CLICK_WAIT)
            button.wait_for(state="hidden", timeout=CLICK_WAIT)
            return
    pytest.fail(f"the card still asks after {CLICKS} clicks on {name}")
