"""The open notebook from the first turn (issue 36 item 1): JupyterLab in Chromium.

Per fresh kernel (tests/e2e/browser/first_turn.py): the first fix turn after the kernel
starts, Ctrl+Enter → its diff box in a frame, against a warm turn's (the same turn
again); in the warm turn, the model's `notebook_edit` call sent → the diff box in a frame;
the model-info requests (the server's window) made when the page linked the kernel and in
the first turn (none: it took the answer asked ahead, `assembly/servers_ahead.py`); the
model's `notebook_run` of a cell (call sent → the cell's output in a frame) against
the person running the same cell (Ctrl+Enter → output in a frame), with the run's
`outputs` message kernel → page and the reads it asked the page (none: it plans from the
turn's read of the cell while the page tells of no change), and the same for a cell that
takes 0.5 s. The scripted model
answers at once from a loopback server, so the figures are the kernel's, the comm's and
the page's. Per kernel, the warm turn and the runs of the cell (the model's and the
person's, in turn) are medians of 3 (`first_turn.REPEATS`). Medians over `reps` kernels;
ratios are medians of each kernel's own.

Needs the extension built (scripts/build_labextension.sh) and Chromium (Debian's
chromium-headless-shell or chromium, ELELEM_CHROMIUM); without either the rows say so.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.common import median, result

NAME = "open_notebook"
#: Fresh kernels in a full run. A kernel's first turn is one sample, and per kernel first ÷
#: warm spreads over 0.8-1.55× on this machine: a median of 8 moves less between runs
#: than one of 5 (bench/README.md, stop 52).
KERNELS = 8
TITLE = "Open notebook: first turn after a kernel start (JupyterLab, Chromium)"


def run(quick: bool = False, smoke: bool = False) -> dict:
    # lazy: the browser helpers import playwright and the tests' Jupyter world
    from tests.e2e.browser.conftest import CHROMIUM, CHROMIUM_ARGS
    from tests.e2e.browser.first_turn import ClockedWire, Figures, measure
    from tests.e2e.browser.lab import EXTENSION, LabServer, extension_env

    missing = [
        why
        for why, there in (
            ("extension not built", (EXTENSION / "package.json").is_file()),
            (f"no Chromium at {CHROMIUM}", Path(CHROMIUM).exists()),
        )
        if not there
    ]
    if missing:
        return result(NAME, TITLE, [("skipped", "-", "; ".join(missing))])
    from playwright.sync_api import sync_playwright

    reps = 1 if smoke else 3 if quick else KERNELS
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-open-"))
    figures: list[Figures] = []
    try:
        with ClockedWire() as wire, sync_playwright() as p:
            env = extension_env(tmp / "jupyter", wire, enabled=True)
            root = tmp / "root"
            root.mkdir()
            server = LabServer(root, env, tmp / "lab.log").start()
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for rep in range(reps):
                    figures.append(measure(browser, server, wire, tmp / "shots", f"b{rep}"))
            finally:
                browser.close()
                server.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result(NAME, TITLE, rows(figures), reps=reps, kernels=[vars(f) for f in figures])


def rows(figures: list) -> list[tuple]:
    """The table's rows: medians in ms, ratios as medians of each kernel's own."""

    def mid(name: str) -> float:
        return round(median([getattr(f, name) for f in figures]), 1)

    def over(a: str, b: str) -> float:
        return round(median([getattr(f, a) / getattr(f, b) for f in figures]), 2)

    asked = f"{mid('asked_at_link'):g} / {mid('asked_in_first_turn'):g}"
    return [
        ("first turn: Ctrl+Enter → diff box", mid("first_box"), "ms"),
        ("warm turn: Ctrl+Enter → diff box", mid("warm_box"), "ms"),
        ("first ÷ warm", over("first_box", "warm_box"), "×"),
        ("  model-info requests at the link / in the first turn", asked, ""),
        ("warm notebook_edit call → diff box", mid("edit_to_box"), "ms"),
        ("notebook_run of a cell: call → output", mid("agent_run"), "ms"),
        ("the person running it: Ctrl+Enter → output", mid("person_run"), "ms"),
        ("notebook_run ÷ person", over("agent_run", "person_run"), "×"),
        ("  its outputs message, kernel → page", mid("hop"), "ms"),
        ("  reads asked of the page after the run call", mid("run_reads"), ""),
        ("a 0.5 s cell: notebook_run call → output", mid("agent_slow"), "ms"),
        ("  the person running it", mid("person_slow"), "ms"),
        ("  notebook_run ÷ person, 0.5 s cell", over("agent_slow", "person_slow"), "×"),
    ]
