"""The widgets of one block of the live view: a thinking/text block, a tool call's card.

Each knows how to render itself from its state; `render.widget.TurnView` places them by
block index and decides when to refresh. Each trait a widget changes after it opened is a
comm message of its own, and the page takes them in order with the open notebook's
requests behind them: a widget opens with its classes and first value, and a change of
several traits of one widget goes as one message (`hold_sync`).
"""

from __future__ import annotations

import time
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ipywidgets import HTML, VBox

from elelem_kernel.agent.blocks import BlockStart
from elelem_kernel.images import ImageEntry
from elelem_kernel.render import cards
from elelem_kernel.render.markdown import to_html
from elelem_kernel.visible import visible

Part = TypeVar("Part")  #: a widget put in a card

HIDDEN = "lm-mod-hidden"  #: Lumino's class for a hidden widget, in JupyterLab and Notebook 7
RENDERED = "jp-RenderedHTMLCommon"  #: the look of the frozen output


class TextBlock:
    """A thinking or text block: a buffer and the HTML widget showing it."""

    def __init__(self, kind: str, widgets: ModuleType, shared: dict[str, object] | None = None):
        self.kind = kind
        self._pieces: list[str] = []
        self.open = True  #: thinking shows while it streams, folds when the text starts
        self.widget = self.html = widgets.HTML("", _dom_classes=(RENDERED,), **(shared or {}))

    @property
    def text(self) -> str:
        """The block's text so far, its pieces joined once per read."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def add(self, piece: str) -> bool:
        """Append a streamed piece (kept apart: joining each time would be quadratic);
        whether it is the first."""
        self._pieces.append(piece)
        return len(self._pieces) == 1

    def render(self) -> None:
        if self.kind == "thinking":
            self.html.value = cards.thinking_html(self.text, open=self.open)
        else:
            self.html.value = to_html(self.text)

    def fold(self) -> None:
        if self.kind == "thinking" and self.open:
            self.open = False
            self.render()


class ToolCard:
    """A tool call's card: header, arguments, approval buttons, result."""

    def __init__(
        self, event: BlockStart, widgets: ModuleType, shared: dict[str, object] | None = None
    ):
        """`shared`: a Layout and an HTML Style for the card's HTML parts (view-wide)."""
        self.widgets = widgets
        self.id = str(event.get("id") or "")
        self.name = str(event.get("name") or "?")
        self.arguments = event.get("arguments") or {}
        self.state = "waiting"
        self.started: float | None = None
        self.ms: int | None = None
        self.has_result = False
        self.detail: str | None = None  #: what the person is waited for (state "person")
        self._shared = shared = {**(shared or {}), "_dom_classes": (RENDERED,)}
        self.header = widgets.HTML(self._summary(), **shared)
        self.args = args = widgets.HTML(cards.arguments_html(self.arguments), **shared)
        # The approval parts and the result are made when first needed, added at the end
        # (a box's children only grow there): a call's card is 4 models on the way to
        # the page (header, arguments, the card and its layout), which draws them before
        # anything the call sends after them.
        self._extra: VBox | None = None
        #: the result, as the frozen view shows it (`set_result`), or None before
        self.result: HTML | None = None
        self.widget = widgets.VBox(
            [self.header, args],
            layout=widgets.Layout(
                margin="4px 0", padding="0 8px", border="1px solid rgba(127,127,127,.35)"
            ),
            _dom_classes=("elelem-card",),
        )

    @property
    def extra(self) -> VBox:
        """The box of the approval parts (buttons, what will run, where to answer)."""
        if self._extra is None:
            layout = {k: v for k, v in self._shared.items() if k == "layout"}
            self._extra = self._add(self.widgets.VBox([], **layout))
        return self._extra

    def approval_parts(self) -> tuple[Any, ...]:
        """What the approval box shows now (nothing when it was never made)."""
        return () if self._extra is None else tuple(self._extra.children)

    def _add(self, part: Part) -> Part:
        """`part`, put last in the card."""
        self.widget.children = (*self.widget.children, part)
        return part

    def render_header(self) -> None:
        self.header.value = self._summary()

    def _summary(self) -> str:
        ms = self.ms
        if ms is None and self.started is not None:
            ms = int((time.monotonic() - self.started) * 1000)
        words = "queued" if self.state == "waiting" else self.state
        detail = self.detail if self.state == "person" else None
        return cards.card_summary(self.name, self.arguments, words, ms, detail)

    def set_state(self, state: str, preview: str | None = None) -> None:
        if state == "running" and self.started is None:
            self.started = time.monotonic()
        elif state in ("ok", "failed", "declined", "interrupted") and self.started is not None:
            self.ms = int((time.monotonic() - self.started) * 1000)
        self.state = state
        if state == "approval" and preview:
            self.clear_extra()
            self.extra.children = [
                self.widgets.HTML(
                    f'<div style="{cards.LABEL}">will run</div>{cards.pre(visible(preview))}'
                )
            ]
        elif state not in ("approval", "person"):
            self.clear_extra()
        self.render_header()

    def clear_extra(self, only: type | None = None) -> None:
        """Remove (and close) the approval parts: all, or only widgets of type `only`."""
        if self._extra is None:
            return
        gone = [c for c in self.extra.children if only is None or isinstance(c, only)]
        if gone:
            self.extra.children = [c for c in self.extra.children if c not in gone]
            for widget in gone:
                for part in descendants(widget):
                    part.close()

    def set_result(self, ok: bool, content: object, images: list[ImageEntry] | None = None) -> None:
        """Show the result as the frozen output will: the card folded to its summary line
        (its images below it), so the page does not jump when the turn ends."""
        self.has_result = True
        with self.header.hold_sync():  # its last summary and its hiding: one message
            if self.state not in ("ok", "failed", "declined", "not run", "over budget"):
                self.set_state("ok" if ok else "failed")
            self.header.add_class(HIDDEN)
        call = {"name": self.name, "arguments": self.arguments, "result": content}
        call.update(ms=self.ms, images=images)
        self.args.add_class(HIDDEN)
        layout = self.widget.layout  # the card's own: the frozen card draws the border
        with layout.hold_sync():  # one message, not six (a border is four traits)
            layout.margin, layout.padding, layout.border = "0", "0", "none"
        shown = cards.tool_card(call, self.state)
        if self.result is None:  # made with its value: one message, not two
            self.result = self._add(self.widgets.HTML(shown, **self._shared))
        else:
            self.result.value = shown


def reply_where_sent(widget: Any) -> None:
    """Let the frontend's clicks on `widget` run on the subshell they are sent to.

    ipykernel 7.4 routes a comm's incoming messages to the subshell that last published
    on it; our widgets publish from the busy main shell, where a click would wait for the
    cell to end. Forgetting that route lets the click use the frontend's comm subshell.
    """
    comm = getattr(widget, "comm", None)
    lock = getattr(comm, "_reply_subshell_lock", None)
    if comm is None or lock is None:
        return
    with lock:
        comm.__dict__.pop("_reply_subshell_id", None)


def descendants(widget: Any) -> list[Any]:
    """`widget`, its children, theirs, ... and each one's Layout and Style models.

    ipywidgets 8 does not close a widget's layout and style with it: a view that closes
    only the widgets leaves two models per widget open in the kernel and the browser.
    """
    out = [widget]
    for part in ("layout", "style"):
        model = getattr(widget, part, None)
        if model is not None and hasattr(model, "close"):
            out.append(model)
    for child in getattr(widget, "children", ()) or ():
        out.extend(descendants(child))
    return out
