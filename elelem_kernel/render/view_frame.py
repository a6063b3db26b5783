"""The frame of a turn's live view, made before the turn when a page is there to show it.

Every live view has the same six widgets whatever its turn shows: a box, the body its
blocks go in, the waiting line, the footer, and the one `Layout` and `HTMLStyle` they
share. Made at the turn's start, they were the first turn's slowest step: in a page that
had not yet handled a widget, the models of their comm_opens were made while the turn
waited (issue 36 item 1). Made ahead, the page makes their models between turns and a
turn only shows its frame.

`make_ahead` makes one frame, and from then on one after each turn's freeze. The link calls
it (`jupyter/restore_comm.ready_for_turns`) when a page with the extension has linked the
kernel, so a kernel with no page (nbclient, papermill, a terminal) makes nothing ahead and
saves no extra widget state. `take` hands the frame over once; a frame whose widgets were closed
meanwhile (`Widget.close_all()`, a page that closed their comms) is closed and not handed.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ipywidgets import HTML, Layout, VBox, Widget
    from ipywidgets.widgets.widget_string import HTMLStyle


class Frame(NamedTuple):
    """The widgets of a live view that every turn has."""

    layout: Layout  #: the one Layout all its parts share
    style: HTMLStyle  #: the one Style all its HTML parts share
    status: HTML  #: the waiting line (hidden, not removed, once the model answers)
    footer: HTML  #: the words under the turn
    body: VBox  #: the blocks, and notes above them
    box: VBox  #: the view: body, status and footer; its children never change

    @property
    def shared(self) -> dict[str, object]:
        """The arguments that give an HTML part the frame's layout and style."""
        return {"layout": self.layout, "style": self.style}

    def widgets(self) -> tuple[Widget, ...]:
        """Each widget of the frame, once."""
        return tuple(self)


def make(status: str = "") -> Frame:
    """A new frame, its waiting line saying `status`.

    One Layout and one Style for all the view's HTML parts: two models, not two each (each
    model costs a comm_open and a comm_close on the way to the page). The box's children
    never change, and the blocks' box (`body`) only grows at the end: ipywidgets' BoxView
    posts a resize to every child view once a children update's views exist, also to a view
    a later update already disposed while it was being made ("Cannot read properties of
    null (reading 'processLuminoMessage')" in the browser console, issue 18 item 9).
    """
    import ipywidgets
    from ipywidgets.widgets.widget_string import HTMLStyle

    layout, style = ipywidgets.Layout(), HTMLStyle()
    line = ipywidgets.HTML(status, layout=layout, style=style)
    footer = ipywidgets.HTML("", layout=layout, style=style)
    body = ipywidgets.VBox([], layout=layout)
    box = ipywidgets.VBox([body, line, footer], layout=layout)
    box.add_class("elelem-turn")
    return Frame(layout, style, line, footer, body, box)


class _Ahead:
    """The frame made for the next turn, and whether one is made after each turn."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.frame: Frame | None = None
        self.making = False
        self.wanted = False  # set by the first make_ahead: a page has linked the kernel


_ahead = _Ahead()


def make_ahead() -> None:
    """Make the next turn's frame, unless one is made or being made; and from now on,
    after each turn (`after_turn`). Called on a thread of its own: never in a turn's wait."""
    with _ahead.lock:
        _ahead.wanted = True
        if _ahead.frame is not None or _ahead.making:
            return
        _ahead.making = True
    frame = None
    try:
        frame = make()
    finally:
        with _ahead.lock:
            _ahead.making = False
            _ahead.frame = frame


def after_turn() -> threading.Thread | None:
    """Make the next turn's frame on a thread of its own, when frames are made ahead; that
    thread (None when not). An error there is dropped: the next turn makes its frame."""
    if not _ahead.wanted:
        return None
    thread = threading.Thread(target=_make_ahead_or_not, name="elelem-frame-ahead", daemon=True)
    thread.start()
    return thread


def _make_ahead_or_not() -> None:
    try:
        make_ahead()
    except Exception:  # the next turn makes its frame itself, as with no page
        pass


def take() -> Frame | None:
    """The frame made ahead, handed over once; None when there is none (or it was closed)."""
    with _ahead.lock:
        frame, _ahead.frame = _ahead.frame, None
    if frame is None or all(_open(w) for w in frame.widgets()):
        return frame
    for widget in frame.widgets():
        widget.close()
    return None


def _open(widget: Widget) -> bool:
    comm = getattr(widget, "comm", None)
    return comm is not None and not getattr(comm, "_closed", False)
