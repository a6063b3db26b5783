"""The `elelem.notebook` comm: the agent's hands on the notebook open in the frontend.

The kernel opens this comm once per turn, from a request sent by a frontend with the
bundled extension (it says so with `features: ["notebook"]` on the `elelem.restore` comm)
and on a kernel whose comm messages run on subshells while the cell runs (JupyterLab >=
4.4, Notebook >= 7.4, ipykernel 7). The opening data names the turn's cell; the extension
answers only where that cell is in its notebook and the request came from its session,
so the tools act only on the notebook that sent the turn.

Messages, each a comm message's data:

    kernel → frontend  {"id": n, "op": "read" | "edit" | "ping" | ..., ...arguments}
    frontend → kernel  {"type": "hello"}                          once, when it owns the turn
                       {"id": n, "ack": true}                     the request is being handled
                       {"id": n, "result": {...}} | {"id": n, "error": "..."}
                       {"type": "changed"}                        the code changed since a read

Each request and each answer, exactly: `comm_schemas/elelem.notebook.json` (the types of
labextension/src/protocol.ts).

The kernel also keeps one standing comm of this target open from the extension's first
`elelem.restore` (`stand`): opened with no cell, no page answers on it, but JupyterLab
runs comm messages on one subshell per comm target for as long as a comm of that target
is open, so the subshell the turns' comms answer on is made once, before the first turn,
instead of for each turn and deleted after it. Each later restore opens it anew and closes
the one before: a page that restores has just loaded (a reload, a notebook reopened, a
second tab) and knows only of comms opened from then on.

A read whose answer says `watched` stays good until the page says `changed`, for at most
`FRESH` seconds: the page watches from its answer for the first change to a cell's source,
an execution count it is given or the list of cells (labextension/src/watch.ts). Until
then a run or an edit plans from that read (`unchanged_read`) instead of asking again, a
round trip less between a `notebook_read` and the `notebook_run` after it. The messages
of one comm are handled in order on one thread, so a `changed` sent after an answer
always drops it; what races is a change made while the kernel decides, as with a read
asked a moment earlier. The bound covers a page that can no longer say `changed`: a tab
reloaded and edited, a websocket holding the page's messages while it reconnects. A page
is not reloaded and edited within `FRESH`; a later plan reads again, and a gone page
fails it as before, with nothing run.

A request with no hello, or no ack within `ACK_TIMEOUT`, fails with a clear message
(extension missing, the tab closed, another client); an acknowledged request waits for
its answer (an edit waits for the person's Accept or Reject) until its own timeout, the
comm closing, or the stop button. Answers are bounded (`MAX_ANSWER`). While a question
waits, `ping`s (only their ack counts) tell whether the page that said hello is still
there (jupyter/page_alive.py): a diff whose page was reloaded or closed ends `gone`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from comm.base_comm import BaseComm

from elelem_kernel.errors import FrontendGone
from elelem_kernel.jupyter.page_alive import answer_or_gone

TARGET = "elelem.notebook"
VERSION = 1
FEATURE = "notebook"
ACK_TIMEOUT = 20.0  #: seconds for the frontend to say it has a request (ELELEM_NOTEBOOK_WAIT)
FRESH = 2.0  #: seconds a watched read stays good for a plan (`unchanged_read`)
MAX_ANSWER = 8_000_000  #: characters of JSON kept from one answer

NOT_REACHABLE = (
    "the open notebook is not reachable from here (it needs JupyterLab >= 4.4 or Notebook "
    ">= 7.4 with the elelem-kernel extension); pass path to work on a notebook file, or "
    "use propose_cell"
)


def reachable(frontend: object, channel: str) -> bool:
    """Whether a turn can reach its open notebook: the extension said it can, and comm
    messages reach the kernel while the cell runs (the `buttons` approval channel)."""
    features = frontend.get("features") if isinstance(frontend, dict) else None
    return channel == "buttons" and isinstance(features, list) and FEATURE in features


_standing: BaseComm | None = None  #: the standing comm (`stand`), the last one opened


def stand() -> None:
    """Open a standing comm (no cell: no page answers on it), then close the one before,
    if any: a page that knew it keeps its subshell through the change. Called on the
    kernel's main thread (jupyter/restore_comm.py)."""
    global _standing
    from comm import create_comm  # lazy: only a page with the extension needs it

    before = _standing
    standing = create_comm(target_name=TARGET, primary=False)

    def closed(_msg: object) -> None:  # a page without the extension closes it
        global _standing
        if _standing is standing:
            _standing = None

    standing.on_close(closed)
    standing.primary = True
    standing.open(data={"v": VERSION, "cell": None, "turn": None})
    _standing = standing
    if before is not None:
        before.close()


class NotebookLink:
    """One turn's comm to its open notebook; requests are awaited on any event loop."""

    def __init__(self, cell: str | None, turn: str | None = None):
        self.cell = cell
        self.turn = turn
        self._comm: Any = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._hello = threading.Event()
        self._greeted = False  #: the page said hello (the extension answers on a subshell)
        self._closed = False
        #: why the page is known gone (it stopped answering pings), or None
        self.lost: str | None = None
        self._acks: dict[int, concurrent.futures.Future[bool]] = {}
        #: told `waiting for you: cell [5] above` while a diff waits for the person's
        #: decision, then None (the live view says so in the call's card)
        self.watcher: Callable[[str | None], None] | None = None
        self._answers: dict[int, concurrent.futures.Future[Any]] = {}
        self._reads: set[int] = set()  #: the ids of the reads asked and not yet answered
        #: when the last read was answered (time.monotonic()) and its answer, while the
        #: page has told of no change since; or None
        self._unchanged: tuple[float, dict[str, object]] | None = None
        try:
            self.wait = float(os.environ.get("ELELEM_NOTEBOOK_WAIT", ACK_TIMEOUT))
        except ValueError:
            self.wait = ACK_TIMEOUT

    def open(self) -> None:
        """Open the comm (on the kernel's main thread, inside the execute request)."""
        from comm import create_comm  # lazy: only a reachable frontend needs it

        comm = create_comm(target_name=TARGET, primary=False)  # opened once wired
        comm.on_msg(self._received)
        comm.on_close(lambda _msg: self._gone("the notebook closed its connection"))
        _answers_anywhere(comm)
        comm.primary = True
        comm.open(data={"v": VERSION, "cell": self.cell, "turn": self.turn})
        self._comm = comm

    def close(self) -> None:
        """End the link: pending requests fail; the frontend drops what it showed."""
        self._gone("the turn ended")
        comm, self._comm = self._comm, None
        if comm is not None:
            try:
                comm.close()
            except Exception:  # the kernel may be shutting down
                pass

    async def request(self, op: str, timeout: float | None = 30.0, **arguments: Any) -> Any:
        """Send one request; its result. `FrontendGone` when nobody answers; `RuntimeError`
        with the frontend's message when it refused."""
        if self.lost:
            raise FrontendGone(self.lost)
        if self._comm is None or self._closed:
            raise FrontendGone(NOT_REACHABLE)
        number = next(self._ids)
        ack: concurrent.futures.Future[bool] = concurrent.futures.Future()
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._lock:
            self._acks[number] = ack
            self._answers[number] = answer
            if op == "read":
                self._reads.add(number)
            elif op != "ping":  # it may change the notebook: plan from a new read
                self._unchanged = None
        try:
            # said hello already (every request but a turn's first): no thread to ask
            greeted = self._hello.is_set()
            if not greeted and not await asyncio.to_thread(self._hello.wait, self.wait):
                raise FrontendGone(f"no answer from the open notebook: {NOT_REACHABLE}")
            comm = self._comm
            if comm is None or self._closed:
                raise FrontendGone("the open notebook went away")
            comm.send({"id": number, "op": op, **arguments})
            try:
                await asyncio.wait_for(asyncio.wrap_future(ack), self.wait)
            except TimeoutError:
                raise FrontendGone(
                    "the open notebook did not take the request (was its tab closed?)"
                ) from None
            asking = op == "edit" and bool(arguments.get("ask"))
            if asking:
                label, where = arguments.get("label") or "a cell", arguments.get("where") or ""
                self._watch(f"waiting for you: {label} {where}".strip())
            try:
                waited = asyncio.wait_for(asyncio.wrap_future(answer), timeout)
                if asking:  # a diff nobody can answer once its page went away
                    message = await answer_or_gone(waited, self, "diff")
                    if isinstance(message, str):
                        return {"decision": "gone", "reason": message}
                else:
                    message = await waited
            except TimeoutError:
                raise FrontendGone(f"the open notebook gave no answer in {timeout:g} s") from None
            finally:
                if asking:
                    self._watch(None)
        finally:
            with self._lock:
                self._acks.pop(number, None)
                self._answers.pop(number, None)
                self._reads.discard(number)
        if "error" in message:
            raise RuntimeError(str(message["error"]))
        return message.get("result")

    def unchanged_read(self) -> dict[str, object] | None:
        """The answer of this turn's last read if it came less than `FRESH` seconds ago,
        the page has told of no change to the cells' code since, none of its sources was
        cut short and the link is open; else None (read again)."""
        kept = self._unchanged
        if kept is None or self._closed or self.lost:
            return None
        at, answer = kept
        return answer if time.monotonic() - at < FRESH else None

    def answering(self) -> bool:
        """Whether the page said hello and the link is open: it acknowledges pings."""
        return self._greeted and not self._closed

    async def ping(self, timeout: float) -> bool:
        """Whether the page acknowledged a ping within `timeout` seconds."""
        comm = self._comm
        if comm is None or self._closed:
            return False
        number = next(self._ids)
        ack: concurrent.futures.Future[bool] = concurrent.futures.Future()
        with self._lock:
            self._acks[number] = ack
        try:
            comm.send({"id": number, "op": "ping"})
            await asyncio.wait_for(asyncio.wrap_future(ack), timeout)
            return True
        except (TimeoutError, FrontendGone):
            return False
        finally:
            with self._lock:
                self._acks.pop(number, None)

    def lose(self, why: str) -> None:
        """The page is gone (`why`): pending and later requests fail at once."""
        self.lost = why
        self._gone(why)

    def _watch(self, text: str | None) -> None:
        if self.watcher is not None:
            try:
                self.watcher(text)
            except Exception:  # the view must not break the request
                pass

    # -- from the frontend (a subshell thread) -----------------------------------------

    def _received(self, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data")
        if not isinstance(data, dict):
            return
        if data.get("type") == "hello":
            self._greeted = True
            self._hello.set()
            return
        if data.get("type") == "changed":
            self._unchanged = None
            return
        number = data.get("id")
        with self._lock:
            ack = self._acks.get(number) if isinstance(number, int) else None
            answer = self._answers.get(number) if isinstance(number, int) else None
        if ack is not None and not ack.done():
            ack.set_result(True)
        if answer is None or data.get("ack"):
            return
        if len(json.dumps(data, default=str)) > MAX_ANSWER:
            data = {"error": "the open notebook's answer was too large"}
        with self._lock:
            if number in self._reads:
                self._reads.discard(number)
                watched = _watched(data.get("result"))
                self._unchanged = None if watched is None else (time.monotonic(), watched)
        if not answer.done():
            answer.set_result(data)

    def _gone(self, why: str) -> None:
        self._closed = True
        with self._lock:
            self._unchanged = None
            pending = list(self._acks.values()) + list(self._answers.values())
        for future in pending:
            if not future.done():
                future.set_exception(FrontendGone(why))
        self._hello.set()  # nobody waits for a hello that will not come


def _watched(result: object) -> dict[str, object] | None:
    """A read's answer a later plan may use: the page watches it (`watched`), and it has
    every cell whole (a cut source would be read again, with no outputs to crowd it)."""
    if not isinstance(result, dict) or result.get("watched") is not True:
        return None
    cells = result.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return None
    return None if any(c.get("clipped") for c in cells) else result


def _answers_anywhere(comm: Any) -> None:
    """Let the frontend's answers run on the subshell it sends them on.

    ipykernel 7.4 routes a comm's incoming messages to the shell that last published on
    it (`_reply_subshell_for`); this comm publishes from the running cell, so its answers
    would wait on the main shell until the turn ends. Each answer's own subshell serves.
    """
    if hasattr(comm, "_reply_subshell_for"):
        comm._reply_subshell_for = lambda data, default: default
