"""The live view of one turn in a notebook: ipywidgets fed block events.

One widget per block, placed by block index: thinking (dimmed, in a `<details>` that
folds when the round's text starts), text (Markdown rendered to safe HTML), tool
cards (arguments, state, duration, result; Allow / Deny / Always buttons while a call
waits for approval). Every widget trait change is one comm message carrying the whole
value, so deltas only fill buffers: a block's first delta shows at once, then a ticker
thread refreshes what changed at most every `interval` seconds, and a block is refreshed
at once when it stops. The view's frame (its box, the blocks' box, the waiting line and
the footer) comes made ahead when a page is linked (`render/view_frame.py`).

At the end of the turn `freeze(record)` replaces the whole view in place with the static
bundle of `render.static`, so the saved notebook never depends on widget state.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import logging
import threading
import time
from typing import Any

from elelem_kernel.agent.blocks import BlockEvent, BlockStart, TurnEnd
from elelem_kernel.agent.record import Meter, TurnRecord
from elelem_kernel.render import call_text, cards, view_frame
from elelem_kernel.render.block_widgets import (
    HIDDEN,
    TextBlock,
    ToolCard,
    descendants,
    reply_where_sent,
)
from elelem_kernel.render.footer import footer_line, meter
from elelem_kernel.render.markdown import escape
from elelem_kernel.render.static import bundle, notice_html

INTERVAL = 0.08  #: seconds between refreshes of a streaming block
CLOCK = 1.0  #: seconds between refreshes of the waiting and running clocks


#: The live view's plain-text face: a second person on the notebook (real-time
#: collaboration) or a client without widgets sees it until the turn's frozen view comes.
ELSEWHERE = (
    "elelem is working on this turn: it shows live in the page that ran the cell, "
    "and here once it ends."
)


class TurnView:
    """Live view of one turn: call it with block events, then `freeze(record)`."""

    def __init__(
        self, provider: str | None = None, model: str | None = None, interval: float = INTERVAL
    ):
        import ipywidgets

        self.widgets = ipywidgets
        self.interval = interval
        self.provider, self.model = provider, model
        self.label = model or provider or "the model"
        self.blocks: dict[int, TextBlock | ToolCard] = {}
        self.dirty: set[int] = set()
        frame = view_frame.take()  # made ahead when a page is linked: shown, not made
        if frame is None:
            frame = view_frame.make(self._waiting_html(0))
        else:
            frame.status.value = self._waiting_html(0)
        self.shared = frame.shared
        self.status, self.footer = frame.status, frame.footer
        self.body, self.box = frame.body, frame.box
        self.compaction: Any = None  # the note of a compaction, made when one happens
        self.context: Meter | None = None  # the meter of the request being sent
        self.started = time.monotonic()
        self.ended = False
        self.waiting_since: float | None = self.started
        self.handle: Any = None
        self.frozen = False
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._asks: dict[int | None, concurrent.futures.Future[str]] = {}
        self._ticker = threading.Thread(
            target=contextvars.copy_context().run,
            args=(self._tick,),
            daemon=True,
            name="elelem-view",
        )

    # -- showing ---------------------------------------------------------------------

    def show(self) -> None:
        """Display the view (with a display id, so `freeze` can replace it) and start ticking."""
        from IPython.display import display

        data = self.box._repr_mimebundle_()
        data["text/plain"] = ELSEWHERE  # what a page without the widget model reads
        self.handle = display(data, raw=True, display_id=True)
        self._ticker.start()

    def __call__(self, event: BlockEvent) -> None:
        """Take one block event (`block_*`, `turn_end`, `status`, `tool_state`)."""
        with self._lock:
            if self.frozen:
                return
            if event["type"] == "block_start":
                self._start(event)
            elif event["type"] == "block_delta":
                block = self.blocks.get(_index(event.get("index")))
                if isinstance(block, TextBlock):
                    if block.add(str(event.get("text", ""))):
                        block.render()  # the first words show at once; the ticker coalesces the rest
                    else:
                        self.dirty.add(event["index"])
            elif event["type"] == "block_stop":
                self._flush(event.get("index"))
            elif event["type"] == "status" and event.get("state") == "waiting":
                self.label = event.get("model") or event.get("provider") or self.label
                self.context = event.get("context")
                self._wait(True)
            elif event["type"] == "tool_state":
                card = self.blocks.get(_index(event.get("index")))
                if isinstance(card, ToolCard):
                    card.set_state(str(event.get("state")), event.get("preview"))
            elif event["type"] == "notice":
                self._notice(str(event.get("text", "")))
            elif event["type"] == "compaction":
                if self.compaction is None:
                    self.compaction = self.widgets.HTML("", **self.shared)
                self.compaction.value = cards.compaction_html(event)
                self._layout()
            elif event["type"] == "turn_end":
                self._end(event)

    def ask(self, index: int | None, name: str) -> concurrent.futures.Future[str]:
        """Put Allow / Deny / Always buttons in the card at `index`; the future gets the answer.

        Clicks arrive on the kernel's comm thread; the future hands the answer over.
        """
        answer: concurrent.futures.Future[str] = concurrent.futures.Future()
        with self._lock:
            card = self.blocks.get(_index(index))
            if not isinstance(card, ToolCard) or self.frozen:
                answer.set_result("deny")
                return answer
            w = self.widgets
            buttons = [
                w.Button(description="Allow", button_style="success", tooltip="run this call"),
                w.Button(description="Deny", button_style="danger", tooltip="do not run it"),
                w.Button(
                    description=f"Always allow {name}"[:40],
                    tooltip=f"run {name} calls without asking for the rest of this session",
                    layout=w.Layout(width="auto"),
                ),
            ]
            for button, decision in zip(buttons, ("allow", "deny", "always"), strict=True):
                button.on_click(lambda _b, d=decision: self._answer(index, d))
                reply_where_sent(button)
            card.extra.children = (*card.extra.children, w.HBox(buttons))
            self._asks[index] = answer
        return answer

    def note(self, index: int | None, text: str | None) -> None:
        """Say in the card at `index` where to answer (None: remove what was said)."""
        with self._lock:
            card = self.blocks.get(_index(index))
            if not isinstance(card, ToolCard) or self.frozen:
                return
            shown = card.approval_parts()
            kept = [c for c in shown if not getattr(c, "_elelem_note", False)]
            gone = [c for c in shown if c not in kept]
            if not text and not gone:  # nothing said, nothing to take back
                return
            if text:
                line = self.widgets.HTML(f'<div style="{cards.LABEL}">{escape(text)}</div>')
                line._elelem_note = True
                kept.append(line)
            card.extra.children = kept
            for widget in gone:
                widget.close()

    def person(self, text: str | None) -> None:
        """Say in the running call's card that it waits for the person (`waiting for you:
        cell [5] above`: a diff in that cell), or, with None, that it runs again; its
        clock and the footer's keep going."""
        with self._lock:
            if self.frozen:
                return
            for card in self.blocks.values():
                if isinstance(card, ToolCard) and card.state in ("running", "person"):
                    card.detail = text
                    card.set_state("person" if text else "running")
                    return

    def withdraw(self, index: int | None) -> None:
        """Remove the buttons of a question nobody answered (interrupt, timeout)."""
        with self._lock:
            answer = self._asks.pop(index, None)
            if answer is not None and not answer.done():
                answer.cancel()
            card = self.blocks.get(_index(index))
            if isinstance(card, ToolCard):
                card.clear_extra(only=self.widgets.HBox)

    def freeze(self, record: TurnRecord) -> None:
        """Replace the live view in place with the static output of `record`."""
        with self._lock:
            if self.frozen:
                return
            self.frozen = True
            for index in list(self._asks):
                self.withdraw(index)
        self._stop.set()  # not joined: frozen (set under the lock), the ticker does nothing
        data, metadata = bundle(record)
        # Close the widgets while their views are still on the page: closed after the
        # output is replaced, each model's close reaches views JupyterLab already disposed.
        self.close()
        if self.handle is not None:
            self.handle.update(data, metadata=metadata, raw=True)
        else:
            from IPython.display import display

            display(data, metadata=metadata, raw=True)
        view_frame.after_turn()

    def close(self) -> None:
        """Close every widget of the view (their state is no longer needed)."""
        with self._lock:
            for block in self.blocks.values():
                for child in descendants(block.widget):
                    child.close()
            for widget in (self.status, self.footer, self.compaction, self.body, self.box):
                if widget is None:
                    continue
                for part in descendants(widget):
                    part.close()

    # -- internals -------------------------------------------------------------------

    def _start(self, event: BlockStart) -> None:
        index, kind = _index(event.get("index")), event.get("block")
        self._wait(False)
        if kind in ("thinking", "text"):
            if kind == "text":
                for block in self.blocks.values():
                    if isinstance(block, TextBlock):
                        block.fold()
            self.blocks[index] = TextBlock(kind, self.widgets, self.shared)
        elif kind == "tool_use":
            self.blocks[index] = ToolCard(event, self.widgets, self.shared)
        elif kind == "tool_result":
            card = self._card_for(str(event.get("id") or ""))
            if card is None:  # a result without its call: show it in a card of its own
                card = ToolCard(
                    {
                        "type": "block_start",
                        "index": index,
                        "block": "tool_use",
                        "id": event.get("id"),
                        "name": "result",
                    },
                    self.widgets,
                    self.shared,
                )
                self.blocks[index] = card
            card.set_result(bool(event.get("ok")), event.get("content"), event.get("images"))
        self._layout()

    def _notice(self, text: str) -> None:
        """Show a notice above the turn's blocks (negative indexes sort first)."""
        block = TextBlock("notice", self.widgets)
        block.html.value = notice_html(text)
        self.blocks[-1_000_000 + len(self.blocks)] = block
        self._layout()

    def _card_for(self, call_id: str) -> ToolCard | None:
        for index in sorted(self.blocks, reverse=True):
            block = self.blocks[index]
            if isinstance(block, ToolCard) and block.id == call_id and not block.has_result:
                return block
        return None

    def _layout(self) -> None:
        """Put the blocks in order: new blocks come last, so the children only grow."""
        children = [self.compaction] if self.compaction is not None else []
        children += [self.blocks[i].widget for i in sorted(self.blocks)]
        if tuple(children) != self.body.children:
            self.body.children = children

    def _wait(self, waiting: bool) -> None:
        """Show the waiting line, or hide it (Lumino's hidden class: display none)."""
        if waiting and self.waiting_since is None:
            self.waiting_since = time.monotonic()
            self.status.value = self._waiting_html(0)
            self.status.remove_class(HIDDEN)
        elif not waiting and self.waiting_since is not None:
            self.waiting_since = None
            self.status.add_class(HIDDEN)

    def _waiting_html(self, seconds: float) -> str:
        dots = "." * (1 + int(seconds) % 3)
        return (
            f'<div style="{cards.DIM}; margin: 4px 0">… waiting for {escape(self.label)}'
            f"{dots} {int(seconds)} s</div>"
        )

    def _flush(self, index: int | None = None) -> None:
        indexes = [index] if index is not None else sorted(self.dirty)
        for i in indexes:
            block = self.blocks.get(i)
            if isinstance(block, TextBlock) and i in self.dirty:
                block.render()
            self.dirty.discard(i)

    def _end(self, event: TurnEnd) -> None:
        self.ended = True
        self._flush()
        self._wait(False)
        self.footer.value = cards.footer_html(footer_line(event, self.provider, self.model))

    def _answer(self, index: int | None, decision: str) -> None:
        with self._lock:
            answer = self._asks.pop(index, None)
            if answer is None or answer.done():
                return
            answer.set_result(decision)
            card = self.blocks.get(_index(index))
            if isinstance(card, ToolCard):
                card.clear_extra()

    def _tick(self) -> None:
        last_clock, pause = 0.0, self.interval
        while not self._stop.wait(pause):
            with self._lock:
                if self.frozen:
                    return
                try:
                    began = time.monotonic()
                    if self.dirty:
                        self._flush()
                    # a long reply takes longer to render: refresh less often, never hog a core
                    pause = max(self.interval, 4 * (time.monotonic() - began))
                    now = time.monotonic()
                    if now - last_clock >= CLOCK:
                        last_clock = now
                        self._clocks(now)
                except Exception:  # a failed refresh must not print into the cell
                    logging.getLogger("elelem_kernel").exception("live view refresh failed")

    def _clocks(self, now: float) -> None:
        if self.waiting_since is not None:
            self.status.value = self._waiting_html(now - self.waiting_since)
        elif not self.ended:
            names = "/".join(dict.fromkeys(str(n) for n in (self.provider, self.model) if n))
            gauge = meter(self.context)
            clock = call_text.seconds((now - self.started) * 1000)
            line = f"{names} · {clock}{f' · {gauge}' if gauge else ''} · working…"
            self.footer.value = cards.footer_html(line.lstrip(" ·"))
        for block in self.blocks.values():
            if isinstance(block, ToolCard) and block.state in ("running", "person"):
                block.render_header()


def _index(value: object) -> int:
    """A block index from an event; -1 (no block) when it is missing or not a number."""
    return value if isinstance(value, int) else -1
