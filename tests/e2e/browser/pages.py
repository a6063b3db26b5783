"""What a person does in JupyterLab, as Playwright steps that wait on the page's own signals.

A `Lab` wraps one page showing one notebook: open it, run a cell, press the toolbar's
stop and restart buttons, save, reload, switch the theme, take screenshots. Every wait
is on a selector or a page condition (kernel idle indicator, the cell's prompt number,
the frozen output), never on a sleep.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

IDLE = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
FROZEN = ".jp-RenderedHTMLCommon .elelem-turn"  # the static output of a finished turn
LIVE = ".jupyter-widgets.elelem-turn"  # the widget view of a running turn
CARD = ".elelem-card"  # a live tool card
VIEWPORT = {"width": 1280, "height": 1000}
FROM_THE_TOP = """
(target) => {
  const scroller = target.querySelector('.jp-WindowedPanel-outer');
  if (scroller) scroller.scrollTop = 0;
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}
"""
BUSY_WAIT = 120_000  # ms: a generous bound for a turn on a loaded 2-core machine

KERNEL_READY = """
() => {
  const name = document.querySelector('.jp-NotebookPanel-toolbar .jp-KernelName');
  const state = document.querySelector('.jp-Notebook-ExecutionIndicator');
  const text = name ? name.textContent.trim() : '';
  const shown = text && !/^(No Kernel|Kernel|Loading)/.test(text) && state && state.dataset.status === 'idle';
  // the toolbar can say idle a moment before the session holds a connected kernel; a cell
  // run in that moment is dropped without a word (CodeCell.execute needs session.kernel)
  // (every server these tests start exposes window.jupyterapp: without it this waits on,
  // rather than race)
  if (!window.jupyterapp) return false;
  const widget = window.jupyterapp.shell.currentWidget;
  const context = widget && widget.sessionContext;
  if (!shown || !context) return false;
  const kernel = context.session && context.session.kernel;
  return context.isReady && !!kernel && kernel.connectionStatus === 'connected'
    && kernel.status === 'idle';
}
"""

#: Installed in the page before a cell runs: records what the live view showed, on every
#: DOM mutation, so the test can check the live phase however fast the turn was.
WATCH_LIVE = """
(cell) => {
  const seen = {live: false, cards: 0, results: 0, thinking: false, waiting: false,
                lengths: [], frozen: false, injected: []};
  const look = () => {
    for (const el of cell.querySelectorAll('.jp-OutputArea img, .jp-OutputArea script')) {
      seen.injected.push(el.outerHTML.slice(0, 200));
    }
    const live = cell.querySelector('.jupyter-widgets.elelem-turn');
    if (cell.querySelector('.jp-RenderedHTMLCommon .elelem-turn')) seen.frozen = true;
    if (!live) return;
    seen.live = true;
    const cards = [...live.querySelectorAll('.elelem-card')];
    seen.cards = Math.max(seen.cards, cards.length);
    // a finished card is folded, as frozen: its result is in it, below the fold (in the
    // text without layout, so its label runs on into the result's first words)
    const withResult = cards.filter(c => /\\bresult/.test(c.textContent));
    seen.results = Math.max(seen.results, withResult.length);
    if (/thinking/.test(live.textContent)) seen.thinking = true;
    if (/waiting for/.test(live.textContent)) seen.waiting = true;
    const n = live.textContent.length;
    if (seen.lengths[seen.lengths.length - 1] !== n) seen.lengths.push(n);
  };
  const observer = new MutationObserver(look);
  observer.observe(cell, {subtree: true, childList: true, characterData: true, attributes: true});
  window.__elelemSeen = seen;
}
"""


class Lab:
    """One page of JupyterLab showing one notebook."""

    def __init__(self, page: Any, server: Any, shots: Path):
        self.page = page
        self.server = server
        self.shots = shots
        self.notebook = ""
        self.dialogs: list[str] = []
        self.console_errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.console_errors.append(f"pageerror: {error}"))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)

    @classmethod
    def in_new_context(cls, browser: Any, server: Any, shots: Path) -> Lab:
        """A page of its own (fresh cookies and storage) on `server`."""
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(30_000)
        return cls(context.new_page(), server, shots)

    # -- opening --------------------------------------------------------------------

    def open(self, notebook: str, workspace: str) -> Lab:
        """Open `notebook` (relative to the server root) and wait for an idle kernel."""
        self.notebook = notebook
        self.page.goto(self.server.lab_url(notebook, workspace))
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        """Wait for the notebook's cells and its kernel: named in the toolbar, and idle."""
        self.page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=BUSY_WAIT)
        self.page.wait_for_function(KERNEL_READY, timeout=BUSY_WAIT)

    def reload(self) -> None:
        self.page.reload()
        self.wait_ready()

    def leave_when_asked(self) -> None:
        """Say yes from now on when the page asks whether to leave it, as a person who
        reloads does (Notebook 7 asks for a notebook whose live view changed since the
        save); dialogs are dismissed otherwise."""
        self.page.remove_listener("dialog", self._dialog)
        self.page.on("dialog", lambda dialog: dialog.accept())

    # -- cells ----------------------------------------------------------------------

    def cell(self, text: str | re.Pattern[str]) -> Any:
        """The code cell whose source contains `text` (or matches the pattern); the first."""
        return (
            self.page.locator(".jp-NotebookPanel .jp-CodeCell")
            .filter(has=self.page.locator(".jp-InputArea-editor", has_text=text))
            .first
        )

    def run(self, text: str, watch: bool = False) -> Any:
        """Run the cell containing `text` (Ctrl+Enter, in place) and wait until it is done."""
        cell = self.start(text, watch)
        self.wait_done(cell)
        return cell

    def start(self, text: str, watch: bool = False) -> Any:
        """Start the cell containing `text` running; returns the cell without waiting."""
        cell = self.cell(text)
        cell.scroll_into_view_if_needed()
        if watch:
            cell.evaluate(WATCH_LIVE)
        cell.locator(".jp-InputArea-editor").click()
        self.page.keyboard.press("Control+Enter")
        return cell

    def wait_done(self, cell: Any) -> None:
        """Wait until the cell's prompt shows its execution number and the kernel is idle."""
        prompt = cell.locator(".jp-InputPrompt").first
        self.page.wait_for_function(
            "(el) => /^\\[\\d+\\]:?$/.test(el.textContent.trim())",
            arg=prompt.element_handle(),
            timeout=BUSY_WAIT,
        )
        self.page.locator(IDLE).first.wait_for(timeout=BUSY_WAIT)

    def turn(self, text: str) -> Any:
        """Run the elelem cell containing `text` and wait for its finished turn."""
        cell = self.run(text)
        cell.locator(FROZEN).wait_for()
        return cell

    def turns(self, *texts: str) -> None:
        """Load elelem, then run the turn in the cell containing each of `texts`, in order."""
        self.run("%load_ext elelem_kernel")
        for text in texts:
            self.turn(text)

    def resume(self, text: str) -> Any:
        """After a restart: load elelem again, then the turn in the cell containing `text`."""
        self.run("%load_ext elelem_kernel")
        return self.turn(text)

    def seen(self) -> dict[str, Any]:
        """What the live view showed during the last watched run."""
        return self.page.evaluate("() => window.__elelemSeen")

    # -- toolbar and menus ----------------------------------------------------------

    def toolbar(self, command: str) -> Any:
        return self.page.locator(f".jp-NotebookPanel-toolbar [data-command='{command}']").first

    def interrupt(self) -> None:
        """Press the toolbar's stop button."""
        self.toolbar("notebook:interrupt-kernel").click()

    def restart(self) -> None:
        """Press the toolbar's restart button, confirm, and wait for the idle kernel."""
        self.toolbar("notebook:restart-kernel").click()
        self.page.locator(".jp-Dialog .jp-mod-accept").click()
        self.page.locator(".jp-Dialog").wait_for(state="detached")
        self.page.locator(IDLE).first.wait_for(timeout=BUSY_WAIT)

    def save(self) -> None:
        """Ctrl+S, and wait until the tab no longer shows unsaved changes."""
        self.page.locator(".jp-NotebookPanel .jp-Notebook").first.click(position={"x": 5, "y": 5})
        self.page.keyboard.press("Control+s")
        self.page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").wait_for(
            state="detached", timeout=BUSY_WAIT
        )

    def theme(self, name: str) -> None:
        """Switch JupyterLab's theme ("JupyterLab Light" / "JupyterLab Dark") and wait for it."""
        light = "true" if "Light" in name else "false"
        self.page.evaluate(
            "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
            name,
        )
        self.page.locator(f"body[data-jp-theme-light='{light}']").wait_for(state="attached")
        self.page.wait_for_function(
            "(name) => document.body.dataset.jpThemeName === name", arg=name
        )

    # -- looking --------------------------------------------------------------------

    def shot(self, name: str, target: Any = None) -> Path:
        """Screenshot the page (or one element) into test-artifacts/."""
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
        if target is not None:
            self._fit(target)
            target.screenshot(path=str(path), animations="disabled")
            self.page.set_viewport_size(VIEWPORT)
        else:
            self.page.screenshot(path=str(path), animations="disabled")
        return path

    def _fit(self, target: Any) -> None:
        """Make the window tall enough to show all of `target` (the notebook scrolls inside)."""
        box = target.bounding_box()
        if box and box["height"] + 200 > VIEWPORT["height"]:
            self.page.set_viewport_size(
                {"width": VIEWPORT["width"], "height": int(box["height"]) + 300}
            )
            # a notebook scrolled to its last cell shows the blank space Lab keeps below
            # it: show a tall target's notebook from the top, once Lab has drawn that
            target.evaluate(FROM_THE_TOP)
        target.scroll_into_view_if_needed()

    def has_plugin(self, plugin: str) -> bool:
        """Whether JupyterLab (or Notebook 7) loaded the frontend plugin `plugin`."""
        return self.page.evaluate(f"() => window.jupyterapp.hasPlugin({plugin!r})")

    def notebook_metadata(self, key: str) -> dict:
        """The open notebook's notebook-level metadata under `key` ({} when unset)."""
        return self.page.evaluate(
            "(key) => window.jupyterapp.shell.currentWidget.content.model.getMetadata(key) || {}",
            key,
        )

    def widget_errors(self) -> int:
        """How many "Error displaying widget" placeholders the page shows."""
        return self.page.get_by_text("Error displaying widget").count()


@contextmanager
def opened(
    browser: Any,
    server: Any,
    shots: Path,
    notebook: str,
    workspace: str,
    before_open: Callable[[Lab], None] | None = None,
) -> Iterator[Lab]:
    """`notebook` open on a page of its own; the page closes and the server's kernels stop
    after (a module's server outlives the test). When the test fails inside, the page is
    saved first, as `WORKSPACE-FAILED.png` in `shots`. `before_open` gets the page before
    it opens anything (to listen to its websockets)."""
    lab = Lab.in_new_context(browser, server, shots)
    if before_open is not None:
        before_open(lab)
    try:
        yield lab.open(notebook, workspace)
    except BaseException:
        with suppress(Exception):  # a page that cannot be shot must not hide the failure
            lab.shot(f"{workspace}-FAILED")
        raise
    finally:
        lab.page.context.close()
        server.shutdown_kernels()
