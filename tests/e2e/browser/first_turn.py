"""How long the open notebook makes a person wait, first turn and warm (issue 36 item 1).

One fresh kernel per `measure`: the person loads elelem and, a second later, a fix turn (the scripted
model reads the open notebook, then proposes an edit: a diff box) runs twice, the first
turn after the kernel's start and a warm one; then the model runs a cell (`notebook_run`)
and the person runs the same cell. Times are wall clock, taken where they happen: the
page notes the person's Ctrl+Enter, the frame a diff box or an output is drawn in
(`performance.timeOrigin + now()`), the wire server when it has sent the model's reply
(`time.time()`): the same clock, one machine.

bench/open_notebook.py prints the figures; test_first_turn.py reports them and checks
what they are of. `Timeline` keeps every kernel message the page sent or got, with the
time the test saw it, to tell where a slow turn's time went.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.browser.comms import decode
from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import BUSY_WAIT, Lab, opened
from tests.wire_servers import Reply, Round, WireServer, reply

#: ms between loading elelem and the first turn: a person moving on to the prompt cell.
PAUSE = 1000
#: The notebook: cell 1 is what the model edits, cell 2 what it and then the person run.
CELLS = [
    "%load_ext elelem_kernel",
    "a = 1",
    "print('ran', sum(range(1000)))",
    "%%elelem -p openai\nfix cell [2]",
    "%%elelem -p openai --mode verify --allow notebook_run\nrun cell [3]",
]
PROMPT = "fix cell [2]"
RUN_PROMPT = "run cell [3]"
EDIT = ("notebook_edit", {"cell": 1, "old": "a = 1", "new": "a = 2"}, "edit-1")
RUN = ("notebook_run", {"cells": [2]}, "run-1")

#: Notes, in the page, when the person presses Ctrl+Enter and when a diff box or an
#: output of cell `ran` is first in a frame (requestAnimationFrame after the DOM change).
MARKS = """
(ran) => {
  const now = () => performance.timeOrigin + performance.now();
  const marks = window.__elelemMarks = {key: [], box: [], output: []};
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && e.ctrlKey) marks.key.push(now());
  }, true);
  let boxes = 0, shown = false;
  const look = () => {
    const count = document.querySelectorAll('.elelem-proposal').length;
    if (count > boxes) requestAnimationFrame(() => marks.box.push(now()));
    boxes = count;
    const cell = document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell')[ran];
    const out = cell && cell.querySelector('.jp-OutputArea-output');
    const has = !!out && out.textContent.includes('ran 499500');
    if (has && !shown) requestAnimationFrame(() => marks.output.push(now()));
    shown = has;
  };
  new MutationObserver(look).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}
"""
MARKED = "(kind) => window.__elelemMarks[kind].slice()"
CLEAR_OUTPUTS = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index).outputs.clear()
"""
#: The kernel's subshells, as the page's own kernel connection lists them (JEP 91).
SUBSHELLS = """
async () => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const reply = await kernel.requestListSubshell({}).done;
  return reply.content.subshell_id;
}
"""


class ClockedWire(WireServer):
    """A `WireServer` noting the wall time (ms) it finished sending each reply."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._sent: dict[int, float] = {}

    def sent(self, scripted: Reply) -> float:
        """When the server finished sending `scripted` (one of the replies queued)."""
        return self._sent[id(scripted)]

    async def _send(self, r: Reply, reader: Any, writer: Any) -> bool:  # type: ignore[override]
        try:
            return await super()._send(r, reader, writer)
        finally:
            self._sent[id(r)] = time.time() * 1000


@dataclass
class Timeline:
    """Every kernel message of one page: (ms, who sent it, msg_type, what it says)."""

    events: list[tuple[float, str, str, str]] = field(default_factory=list)

    def attach(self, lab: Lab) -> None:
        lab.page.on("websocket", self._socket)

    def _socket(self, socket: Any) -> None:
        if "/api/kernels/" in socket.url:
            socket.on("framesent", lambda payload: self._frame("page", payload))
            socket.on("framereceived", lambda payload: self._frame("kernel", payload))

    def _frame(self, who: str, payload: str | bytes) -> None:
        at = time.time() * 1000
        message = decode(payload)
        if message is None:
            return
        kind = message.get("header", {}).get("msg_type", "")
        content = message.get("content") or {}
        data = content.get("data") if isinstance(content.get("data"), dict) else {}
        said = str(content.get("target_name") or data.get("op") or data.get("type") or "")
        if kind in ("status", "stream") or kind.endswith("_input"):
            said = str(content.get("execution_state") or "")
        self.events.append((at, who, kind, said))

    def since(self, start: float) -> list[str]:
        """The events from `start` (ms) on, one line each, times relative to it."""
        return [
            f"{at - start:8.0f} ms  {who:6} {kind} {said}".rstrip()
            for at, who, kind, said in self.events
            if at >= start
        ]


@dataclass
class Figures:
    """One fresh kernel's figures, in ms."""

    first_box: float
    warm_box: float
    edit_to_box: float
    agent_run: float
    person_run: float
    subshells_before: list[str]
    subshells_after: list[str]
    timeline: list[str]


def measure(browser: Any, server: Any, wire: ClockedWire, shots: Path, tag: str) -> Figures:
    """The figures of one kernel, from its start, on `server`'s notebook `first-TAG`."""
    name = write_notebook(Path(server.root) / f"first-{tag}.ipynb", CELLS)
    timeline = Timeline()
    with opened(browser, server, shots, name, f"first-{tag}", timeline.attach) as lab:
        return measure_in(lab, wire, timeline, tag)


def measure_in(lab: Lab, wire: ClockedWire, timeline: Timeline, tag: str) -> Figures:
    """The figures of the kernel `lab` has just started on a notebook of CELLS."""
    lab.page.evaluate(MARKS, 2)
    lab.run("%load_ext elelem_kernel")
    lab.page.wait_for_timeout(PAUSE)  # the person moves on to the prompt cell
    subshells_before = lab.page.evaluate(SUBSHELLS)
    start = time.time() * 1000
    first = fix_turn(lab, wire, f"first-{tag}")
    trace = timeline.since(start)
    warm = fix_turn(lab, wire, f"warm-{tag}")
    subshells_after = lab.page.evaluate(SUBSHELLS)
    return Figures(
        first_box=first[1] - first[0],
        warm_box=warm[1] - warm[0],
        edit_to_box=warm[1] - warm[2],
        agent_run=agent_runs(lab, wire),
        person_run=person_runs(lab),
        subshells_before=subshells_before,
        subshells_after=subshells_after,
        timeline=trace,
    )


def fix_turn(lab: Lab, wire: ClockedWire, shot: str) -> tuple[float, float, float]:
    """Run the fix turn to its diff box, reject the edit, wait for the turn's end; (the
    person's Ctrl+Enter, the box in a frame, the wire server's edit call sent), ms."""
    edit = reply("openai", Round(calls=[EDIT]))
    wire.queue(
        reply("openai", Round(calls=[("notebook_read", {}, "read-1")])),
        edit,
        reply("openai", Round(text="Left cell [2] as it was.")),
    )
    keys, boxes = len(marks(lab, "key")), len(marks(lab, "box"))
    turn = lab.start(PROMPT)
    box = lab.cell("a = 1").locator(".elelem-proposal")
    box.wait_for(timeout=BUSY_WAIT)
    lab.page.wait_for_function(f"() => window.__elelemMarks.box.length > {boxes}")
    lab.shot(f"36-{shot}-diff-box", lab.cell("a = 1"))
    edit_sent = wire.sent(edit)
    box.get_by_role("button", name="Reject", exact=True).click()
    lab.wait_done(turn)
    return marks(lab, "key")[keys], marks(lab, "box")[boxes], edit_sent


def agent_runs(lab: Lab, wire: ClockedWire) -> float:
    """ms from the model's `notebook_run` call sent to the cell's output in a frame."""
    call = reply("openai", Round(calls=[RUN]))  # a later round, as an edit's: the first
    # round's call would come while the turn still starts (the scripted model is instant)
    first = reply("openai", Round(calls=[("notebook_read", {"cells": [2]}, "read-1")]))
    wire.queue(first, call, reply("openai", Round(text="It ran.")))
    lab.page.evaluate(CLEAR_OUTPUTS, 2)
    outputs = len(marks(lab, "output"))
    turn = lab.start(RUN_PROMPT)
    lab.page.wait_for_function(f"() => window.__elelemMarks.output.length > {outputs}")
    ran = marks(lab, "output")[outputs] - wire.sent(call)
    lab.wait_done(turn)
    return ran


def person_runs(lab: Lab) -> float:
    """ms from the person's Ctrl+Enter on the same cell to its output in a frame."""
    lab.page.evaluate(CLEAR_OUTPUTS, 2)
    keys, outputs = len(marks(lab, "key")), len(marks(lab, "output"))
    lab.run("print('ran'")
    lab.page.wait_for_function(f"() => window.__elelemMarks.output.length > {outputs}")
    return marks(lab, "output")[outputs] - marks(lab, "key")[keys]


def marks(lab: Lab, kind: str) -> list[float]:
    return lab.page.evaluate(MARKED, kind)
