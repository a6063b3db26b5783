"""How long the open notebook makes a person wait, first turn and warm (issue 36 item 1).

One fresh kernel per `measure`: the person loads elelem and, a second later, a fix turn (the scripted
model reads the open notebook, then proposes an edit: a diff box) runs, the first turn
after the kernel's start, then again `REPEATS` times warm; then the model runs a cell
(`notebook_run`) and the person runs the same cell, in turn `REPEATS` times (a warm
figure and a run's are medians of those), then both once a cell that takes half a second
(`SLOW`: what a person feels on a real cell). Times are wall clock, taken where they happen: the
page notes the person's Ctrl+Enter, the frame a diff box or an output is drawn in
(`performance.timeOrigin + now()`), the wire server when it has sent the model's reply
(`time.time()`), the kernel when it made a message (its header's date): the same clock,
one machine. The model reads the cell before it runs it, as a model does; the run then
plans from that read (the page tells the kernel if the code changes since), so what it
sends the page is the cell's `outputs`: the header's date → the page's kernel connection
has it is noted, and any read the page was asked after the run call.

bench/open_notebook.py prints the figures; test_first_turn.py reports them and checks
what they are of. `Timeline` keeps every kernel message the page sent or got, with the
time the test saw it, to tell where a slow turn's time went.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from tests.e2e.browser.comms import decode
from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import BUSY_WAIT, Lab, opened
from tests.wire_servers import Reply, Round, WireServer, reply

#: ms between loading elelem and the first turn: a person moving on to the prompt cell.
PAUSE = 1000
#: Warm turns, and runs of the cell by the model and by the person (alternating), per
#: kernel: each figure is their median (the first turn is one by nature).
REPEATS = 3
#: The notebook: cell 1 is what the model edits, cell 2 what it and then the person run.
CELLS = [
    "%load_ext elelem_kernel",
    "a = 1",
    "print('ran', sum(range(1000)))",
    "%%elelem -p openai\nfix cell [2]",
    "%%elelem -p openai --mode verify --allow notebook_run\nrun cell [3]",
    "import time\ntime.sleep(0.5)\nprint('slow', 2 ** 10)",
    "%%elelem -p openai --mode verify --allow notebook_run\nrun cell [6]",
]
PROMPT = "fix cell [2]"
RUN_PROMPT = "run cell [3]"
EDIT = ("notebook_edit", {"cell": 1, "old": "a = 1", "new": "a = 2"}, "edit-1")


@dataclass(frozen=True)
class Ran:
    """A cell the model and then the person run: its index, a line of it (to find it),
    the output it shows, the prompt that has the model run it, the marks' name."""

    index: int
    line: str
    output: str
    prompt: str
    kind: str


TRIVIAL = Ran(2, "print('ran'", "ran 499500", RUN_PROMPT, "output")
SLOW = Ran(5, "time.sleep(0.5)", "slow 1024", "run cell [6]", "slow")

#: Notes, in the page, when the person presses Ctrl+Enter, when a diff box or an output of
#: a `Ran` cell is first in a frame (requestAnimationFrame after the DOM change), when
#: the page's kernel connection has each `read` and `outputs` request (`hops`: the kernel's
#: date of it, the page's), and each script the page fetches (`scripts`: its path, when the
#: fetch started; an observer, as the page's resource timing buffer fills at start).
MARKS = """
(watched) => {
  const now = () => performance.timeOrigin + performance.now();
  const marks = window.__elelemMarks = {key: [], box: [], hops: [], scripts: []};
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) {
      if (e.initiatorType === 'script') {
        marks.scripts.push([new URL(e.name).pathname, performance.timeOrigin + e.startTime]);
      }
    }
  }).observe({type: 'resource'});
  for (const w of watched) marks[w.kind] = [];
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && e.ctrlKey) marks.key.push(now());
  }, true);
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  kernel.anyMessage.connect((_, args) => {
    const msg = args.msg, data = msg.content && msg.content.data;
    if (args.direction === 'recv' && msg.header.msg_type === 'comm_msg' && data
        && (data.op === 'read' || data.op === 'outputs')) {
      marks.hops.push([data.op, Date.parse(msg.header.date), now()]);
    }
  });
  let boxes = 0;
  const shown = {};
  // live collections: the observer runs at each change of the page during a turn, and
  // must not add its own work to what it times
  const proposals = document.getElementsByClassName('elelem-proposal');
  const cells = document.querySelector('.jp-NotebookPanel').getElementsByClassName('jp-CodeCell');
  const look = () => {
    const count = proposals.length;
    if (count > boxes) requestAnimationFrame(() => marks.box.push(now()));
    boxes = count;
    for (const w of watched) {
      const out = cells[w.index] && cells[w.index].querySelector('.jp-OutputArea-output');
      const has = !!out && out.textContent.includes(w.output);
      if (has && !shown[w.kind]) requestAnimationFrame(() => marks[w.kind].push(now()));
      shown[w.kind] = has;
    }
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
#: The page has linked the kernel: it holds a comm of the standing `elelem.notebook` target
#: and one of the standing widget's (`jupyter.widget`), each on a subshell the kernel
#: has; with `only`, the kernel has no other subshell (the `elelem.restore` comm's own is
#: gone; a page reloaded leaves its old ones). The page's comms are its kernel
#: connection's private `_comms`.
LINKED = """
async (only) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const standing = new Set(['elelem.notebook', 'jupyter.widget']);
  const comms = [...kernel._comms.values()];
  const held = new Set(comms
    .filter(comm => standing.has(comm.targetName) && comm.subshellId)
    .map(comm => comm.subshellId));
  const widgets = comms.filter(comm => comm.targetName === 'jupyter.widget').length;
  const listed = (await kernel.requestListSubshell({}).done).content.subshell_id;
  return held.size === 2 && [...held].every(id => listed.includes(id))
    && (!only || listed.length === 2) && widgets >= 7;  // the standing widget, the frame
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
    """Every kernel message of one page: (ms, who sent it, msg_type, what it says), in
    order. The ms are when Playwright handed the event to Python, which can be tens of ms
    after the frame passed: good for order, not for the time of a hop."""

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
    #: the least ms a `read` or `outputs` request of the trivial run took kernel → page
    #: (the median of the runs where the page noted one after the call)
    hop: float
    #: reads the page was asked after the model's run call: 0 when the run planned from
    #: the turn's read (nothing changed since: labextension/src/watch.ts)
    run_reads: int
    agent_slow: float
    person_slow: float
    subshells_before: list[str]
    subshells_after: list[str]
    #: the model-info requests (a local server's window) the server had once the page
    #: linked the kernel, and those the first turn made: 0, it took the answer asked ahead
    asked_at_link: int
    asked_in_first_turn: int
    timeline: list[str]
    #: the scripts the page fetched between the first turn's Ctrl+Enter and its diff box:
    #: code loaded on the first turn's path (the widget manager's controls, before warm.ts)
    first_scripts: list[str]


def measure(browser: Any, server: Any, wire: ClockedWire, shots: Path, tag: str) -> Figures:
    """The figures of one kernel, from its start, on `server`'s notebook `first-TAG`."""
    name = write_notebook(Path(server.root) / f"first-{tag}.ipynb", CELLS)
    timeline = Timeline()
    with opened(browser, server, shots, name, f"first-{tag}", timeline.attach) as lab:
        return measure_in(lab, wire, timeline, tag)


def measure_in(lab: Lab, wire: ClockedWire, timeline: Timeline, tag: str) -> Figures:
    """The figures of the kernel `lab` has just started on a notebook of CELLS."""
    lab.page.evaluate(MARKS, [vars(TRIVIAL), vars(SLOW)])
    asked = len(wire.info_requests)
    lab.run("%load_ext elelem_kernel")
    lab.page.wait_for_timeout(PAUSE)  # the person moves on to the prompt cell
    # and the link is whole by then (its standing widget comes after the warm-up's imports,
    # ~0.5 s): a slower machine's first turn would make the widget target's subshell itself
    subshells_before = wait_linked(lab)
    asked_at_link = window_asked(lab, wire, asked)
    start = time.time() * 1000
    first = fix_turn(lab, wire, f"first-{tag}")
    asked_in_first_turn = len(wire.info_requests) - asked - asked_at_link
    trace = timeline.since(start)
    first_scripts = [path for path, at in marks(lab, "scripts") if first[0] <= at <= first[1]]
    warm = [fix_turn(lab, wire, f"warm-{tag}", shot=i == 0) for i in range(REPEATS)]
    subshells_after = lab.page.evaluate(SUBSHELLS)
    runs = [(agent_runs(lab, wire, TRIVIAL), person_runs(lab, TRIVIAL)) for _ in range(REPEATS)]
    agent_slow, _, _ = agent_runs(lab, wire, SLOW)
    return Figures(
        first_box=first[1] - first[0],
        warm_box=median(box - key for key, box, _ in warm),
        edit_to_box=median(box - sent for _, box, sent in warm),
        agent_run=median(agent[0] for agent, _ in runs),
        person_run=median(person for _, person in runs),
        hop=median([h for h in (agent[1] for agent, _ in runs) if not math.isnan(h)] or [math.nan]),
        run_reads=max(agent[2] for agent, _ in runs),
        agent_slow=agent_slow,
        person_slow=person_runs(lab, SLOW),
        subshells_before=subshells_before,
        subshells_after=subshells_after,
        asked_at_link=asked_at_link,
        asked_in_first_turn=asked_in_first_turn,
        timeline=trace,
        first_scripts=first_scripts,
    )


def wait_linked(lab: Lab, only: bool = True, timeout: float = 60) -> list[str]:
    """Wait until the page has linked its kernel (`LINKED`, `only` its subshells); the
    kernel's subshells then. (Polled here: `wait_for_function` takes a pending promise
    for a true answer.)"""
    deadline = time.monotonic() + timeout
    while not lab.page.evaluate(LINKED, only):
        if time.monotonic() > deadline:
            raise AssertionError(f"not linked: subshells {lab.page.evaluate(SUBSHELLS)}")
        lab.page.wait_for_timeout(100)
    return lab.page.evaluate(SUBSHELLS)


def window_asked(lab: Lab, wire: ClockedWire, before: int, timeout: float = 10) -> int:
    """Wait until the kernel linked after `before` model-info requests has asked the
    server for its window (the last thing the link readies: one request after another,
    until one says), no new one for 0.3 s; how many requests it made."""
    deadline = time.monotonic() + timeout
    count, still = before, 0.0
    while time.monotonic() < deadline and (count == before or time.monotonic() - still < 0.3):
        if len(wire.info_requests) != count:
            count, still = len(wire.info_requests), time.monotonic()
        lab.page.wait_for_timeout(50)
    return count - before


def fix_turn(
    lab: Lab, wire: ClockedWire, name: str, shot: bool = True
) -> tuple[float, float, float]:
    """Run the fix turn to its diff box (a screenshot `name` of it with `shot`), reject the
    edit, wait for the turn's end; (the person's Ctrl+Enter, the box in a frame, the wire
    server's edit call sent), ms."""
    edit = reply("openai", Round(calls=[EDIT]))
    wire.queue(
        reply("openai", Round(calls=[("notebook_read", {}, "read-1")])),
        edit,
        reply("openai", Round(text="Left cell [2] as it was.")),
    )
    keys, boxes = len(marks(lab, "key")), len(marks(lab, "box"))
    turn = lab.start(PROMPT)
    # the page's own mark first: a locator's polling while the turn runs would add its
    # work (a text match over the notebook's cells, the first time its code runs) to
    # the page's, on the path it times
    lab.page.wait_for_function(
        f"() => window.__elelemMarks.box.length > {boxes}", timeout=BUSY_WAIT
    )
    box = lab.cell("a = 1").locator(".elelem-proposal")
    box.wait_for(timeout=BUSY_WAIT)
    if shot:
        lab.shot(f"36-{name}-diff-box", lab.cell("a = 1"))
    edit_sent = wire.sent(edit)
    box.get_by_role("button", name="Reject", exact=True).click()
    lab.wait_done(turn)
    return marks(lab, "key")[keys], marks(lab, "box")[boxes], edit_sent


def agent_runs(lab: Lab, wire: ClockedWire, cell: Ran) -> tuple[float, float, int]:
    """ms from the model's `notebook_run` call of `cell` sent to the cell's output in a
    frame; the least ms one of the run's requests took from the kernel to the page; how
    many of them were reads."""
    run = ("notebook_run", {"cells": [cell.index]}, "run-1")
    call = reply("openai", Round(calls=[run]))  # a later round, as an edit's: the first
    # round's call would come while the turn still starts (the scripted model is instant)
    first = reply("openai", Round(calls=[("notebook_read", {"cells": [cell.index]}, "read-1")]))
    wire.queue(first, call, reply("openai", Round(text="It ran.")))
    lab.page.evaluate(CLEAR_OUTPUTS, cell.index)
    outputs, hops = len(marks(lab, cell.kind)), len(marks(lab, "hops"))
    turn = lab.start(cell.prompt)
    lab.page.wait_for_function(f"() => window.__elelemMarks[{cell.kind!r}].length > {outputs}")
    ran = marks(lab, cell.kind)[outputs] - wire.sent(call)
    lab.wait_done(turn)
    sent = wire.sent(call)
    after = [(op, got - made) for op, made, got in marks(lab, "hops")[hops:] if made >= sent]
    reads = sum(op == "read" for op, _ in after)
    return ran, min((taken for _, taken in after), default=math.nan), reads


def person_runs(lab: Lab, cell: Ran) -> float:
    """ms from the person's Ctrl+Enter on `cell` to its output in a frame."""
    lab.page.evaluate(CLEAR_OUTPUTS, cell.index)
    keys, outputs = len(marks(lab, "key")), len(marks(lab, cell.kind))
    lab.run(cell.line)
    lab.page.wait_for_function(f"() => window.__elelemMarks[{cell.kind!r}].length > {outputs}")
    return marks(lab, cell.kind)[outputs] - marks(lab, "key")[keys]


def marks(lab: Lab, kind: str) -> list[Any]:
    return lab.page.evaluate(MARKED, kind)
