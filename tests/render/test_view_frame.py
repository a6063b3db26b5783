"""The live view's frame, made ahead of a turn once a page is linked (issue 36 item 1).

A page makes a widget's model when its comm_open arrives; in a page that has handled no
widget yet, the first turn's frame (box, body, waiting line, footer, layout, style) took
the longest. Made ahead, the turn shows it without opening a comm.
"""

from __future__ import annotations

import threading
import time

import comm
import ipywidgets
import pytest

from elelem_kernel.render import view_frame
from elelem_kernel.render.widget import TurnView
from tests.render.test_widget import CountingComm, Handle


@pytest.fixture(autouse=True)
def page(monkeypatch):
    """Widgets that send to `CountingComm`, and no frame made or wanted yet (the kernel's start).
    After the test, the frames its turns' ends started making are made (they would open
    widgets in the next test, and want frames in the module's own state)."""
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: CountingComm(*a, **k))
    monkeypatch.setattr(view_frame, "_ahead", view_frame._Ahead())
    CountingComm.sent = []
    yield
    for thread in threading.enumerate():
        if thread.name == "elelem-frame-ahead":
            thread.join(10)


def opened() -> int:
    return sum(1 for m in CountingComm.sent if m["msg_type"] == "comm_open")


def view() -> TurnView:
    made = TurnView(provider="demo", model="demo-1")
    made.handle = Handle()
    return made


def frozen(made: TurnView) -> None:
    made.freeze({"stop": "end_turn", "rounds": [], "usage": {}})


def ahead(timeout: float = 10) -> view_frame.Frame:
    """The frame made ahead, once it is made."""
    deadline = time.monotonic() + timeout
    while view_frame._ahead.frame is None:
        assert time.monotonic() < deadline, "no frame made ahead"
        time.sleep(0.01)
    return view_frame._ahead.frame


def test_a_turn_shows_the_frame_made_ahead_and_opens_no_comm_for_it():
    view_frame.make_ahead()
    frame = ahead()
    assert opened() == len(frame.widgets()) == 6
    CountingComm.sent = []
    made = view()
    assert opened() == 0
    assert made.box is frame.box and made.status is frame.status
    assert "waiting for demo-1" in made.status.value  # its line says whom it waits for
    assert [m["msg_type"] for m in CountingComm.sent] == ["comm_msg"]  # that line, one update
    assert view_frame.take() is None  # handed over once
    frozen(made)


def test_each_turn_s_end_makes_the_next_turn_s_frame():
    view_frame.make_ahead()
    first = ahead()
    made = view()
    frozen(made)
    second = ahead()
    assert second.box is not first.box
    assert all(w.comm is None for w in first.widgets())  # the turn's own, closed with it
    assert all(w.comm is not None for w in second.widgets())
    shown = view()
    assert shown.box is second.box
    frozen(shown)


def test_without_a_linked_page_no_frame_is_made():
    made = view()
    assert opened() == 6  # the turn made its own
    frozen(made)
    assert view_frame.after_turn() is None
    assert view_frame._ahead.frame is None and opened() == 6


@pytest.mark.parametrize("how", ["closed in the kernel", "closed by the page"])
def test_a_frame_closed_before_its_turn_is_not_shown(how):
    view_frame.make_ahead()
    frame = ahead()
    if how == "closed in the kernel":
        ipywidgets.Widget.close_all()  # what a person's cleanup cell may do
    else:
        frame.footer.comm._closed = True  # a page that closed one of the comms
    made = view()
    assert made.box is not frame.box
    assert all(w.comm is not None for w in (made.box, made.body, made.status, made.footer))
    assert all(w.comm is None for w in frame.widgets())  # none of it left open
    frozen(made)


def test_one_frame_is_made_at_a_time_and_a_turn_never_waits_for_it(monkeypatch):
    go = threading.Event()
    make = view_frame.make

    def slow(status: str = "") -> view_frame.Frame:  # the frame ahead waits for `go`
        if threading.current_thread() is making:
            go.wait(10)
        return make(status)

    monkeypatch.setattr(view_frame, "make", slow)
    making = threading.Thread(target=view_frame.make_ahead)
    making.start()
    while not view_frame._ahead.making:
        time.sleep(0.01)
    view_frame.make_ahead()  # a second one returns at once: one is being made
    made = view()  # the turn does not wait for the frame being made: it makes its own
    assert view_frame._ahead.frame is None and opened() == 6
    go.set()
    making.join(10)
    assert ahead() is not None and opened() == 12
    frozen(made)


def test_a_frame_that_cannot_be_made_ahead_is_made_by_its_turn(monkeypatch):
    view_frame.make_ahead()
    made = view()
    make = view_frame.make

    def broken(status: str = "") -> view_frame.Frame:  # e.g. a comm that cannot open
        if threading.current_thread().name == "elelem-frame-ahead":
            raise RuntimeError("no comm")
        return make(status)

    monkeypatch.setattr(view_frame, "make", broken)
    raised: list[type] = []  # a thread's error would print a traceback in the kernel's log
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_type))
    frozen(made)
    thread = view_frame.after_turn()
    assert thread is not None
    thread.join(10)
    assert view_frame._ahead.frame is None and not view_frame._ahead.making
    assert raised == []
    shown = view()
    assert shown.box.comm is not None and "waiting for demo-1" in shown.status.value
    frozen(shown)
