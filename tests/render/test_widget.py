from __future__ import annotations

import json
import re
import time

import comm
import pytest
from comm.base_comm import BaseComm

from elelem_kernel.render import view_frame
from elelem_kernel.render.widget import HIDDEN, TurnView


class CountingComm(BaseComm):
    """A comm that keeps every message a widget would send to the frontend."""

    sent: list[dict] = []

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        CountingComm.sent.append({"msg_type": msg_type, "data": data})


class Handle:
    def __init__(self):
        self.updates = []

    def update(self, data, **kwargs):
        self.updates.append((data, kwargs))


@pytest.fixture
def view(monkeypatch):
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: CountingComm(*a, **k))
    monkeypatch.setattr(view_frame, "_ahead", view_frame._Ahead())  # no page: no frame ahead
    CountingComm.sent = []
    v = TurnView(provider="demo", model="demo-1", interval=0.05)
    v.handle = Handle()
    yield v
    v.freeze({"stop": "end_turn"})


def values(view):
    """Every HTML value currently in the view, joined."""
    out = []
    stack = [view.box]
    while stack:
        w = stack.pop()
        out.append(str(getattr(w, "value", "")))
        stack.extend(getattr(w, "children", ()))
    return "\n".join(out)


def test_blocks_are_placed_by_index_and_results_land_in_their_card(view):
    view({"type": "status", "state": "waiting", "model": "demo-1", "round": 1})
    assert "waiting for demo-1" in values(view)
    view({"type": "block_start", "index": 0, "block": "text"})
    view({"type": "block_delta", "index": 0, "text": "Two calls <img src=x onerror=alert(1)>"})
    view({"type": "block_stop", "index": 0})
    for i, name in ((1, "read"), (2, "shell")):
        view(
            {
                "type": "block_start",
                "index": i,
                "block": "tool_use",
                "id": f"c{i}",
                "name": name,
                "arguments": {"path": f"f{i}"},
            }
        )
        view({"type": "block_stop", "index": i})
    # the second call's result arrives first: it must go to the second card
    view({"type": "tool_state", "index": 2, "id": "c2", "state": "running"})
    view(
        {
            "type": "block_start",
            "index": 4,
            "block": "tool_result",
            "id": "c2",
            "ok": False,
            "content": json.dumps({"ok": False, "error": "<script>x</script>"}),
        }
    )
    view({"type": "block_stop", "index": 4})
    view(
        {
            "type": "block_start",
            "index": 3,
            "block": "tool_result",
            "id": "c1",
            "ok": True,
            "content": json.dumps({"ok": True, "content": "hello"}),
        }
    )
    view({"type": "block_stop", "index": 3})
    first, second = view.blocks[1], view.blocks[2]
    assert "hello" in first.result.value and "script" not in first.result.value.replace(
        "&lt;script&gt;", ""
    )
    assert "&lt;script&gt;" in second.result.value and second.state == "failed"
    assert first.state == "ok"
    assert sorted(view.blocks) == [0, 1, 2]
    html = values(view)
    assert "<img" not in html and "&lt;img" in html
    assert "waiting for" not in view.box.children[-1].value


def test_deltas_are_coalesced(view):
    view({"type": "block_start", "index": 0, "block": "text"})
    before = len(CountingComm.sent)
    for i in range(2000):
        view({"type": "block_delta", "index": 0, "text": f"w{i} "})
    view({"type": "block_stop", "index": 0})
    updates = len(CountingComm.sent) - before
    assert updates < 50, updates
    assert "w1999" in view.blocks[0].html.value


def test_the_first_delta_shows_at_once_without_waiting_for_the_ticker(view):
    view({"type": "block_start", "index": 0, "block": "text"})
    view({"type": "block_delta", "index": 0, "text": "Hello"})
    assert "Hello" in view.blocks[0].html.value  # the view was never shown: no ticker runs
    view({"type": "block_delta", "index": 0, "text": " world"})
    assert "world" not in view.blocks[0].html.value  # later deltas wait to be coalesced
    view({"type": "block_stop", "index": 0})
    assert "Hello world" in view.blocks[0].html.value


def test_thinking_collapses_when_text_starts(view):
    view({"type": "block_start", "index": 0, "block": "thinking"})
    view({"type": "block_delta", "index": 0, "text": "hmm <b>"})
    view({"type": "block_stop", "index": 0})
    assert "<details open" in view.blocks[0].html.value
    assert "hmm &lt;b&gt;" in view.blocks[0].html.value
    view({"type": "block_start", "index": 1, "block": "text"})
    assert "<details open" not in view.blocks[0].html.value
    assert "<details" in view.blocks[0].html.value


def test_buttons_answer_thread_safely(view):
    view(
        {
            "type": "block_start",
            "index": 0,
            "block": "tool_use",
            "id": "c",
            "name": "shell",
            "arguments": {"command": "ls"},
        }
    )
    view({"type": "tool_state", "index": 0, "id": "c", "state": "approval", "preview": "$ ls"})
    answer = view.ask(0, "shell")
    card = view.blocks[0]
    assert "$ ls" in values(view)
    row = card.extra.children[-1]
    assert [b.description for b in row.children][:2] == ["Allow", "Deny"]
    row.children[2].click()
    assert answer.result(timeout=1) == "always"
    assert card.extra.children == ()
    # the approval parts sit under the arguments, the result comes after them
    view({"type": "block_start", "index": 1, "block": "tool_result", "id": "c", "ok": True})
    assert card.widget.children == (card.header, card.args, card.extra, card.result)


def test_the_approval_preview_shows_control_characters_instead_of_obeying_them(view):
    """A cell's code from a shared notebook may hold a bidi override that reorders what
    the person reads in the card; it is shown as an escape."""
    view({"type": "block_start", "index": 0, "block": "tool_use", "id": "c", "name": "run"})
    preview = "--- cell 2 ---\naccess = 'user\u202e \u2066# admin\u2069 \u2066'"
    view({"type": "tool_state", "index": 0, "id": "c", "state": "approval", "preview": preview})
    shown = values(view)
    assert "\u202e" not in shown and "\\u202e" in shown and "\\u2066" in shown


def test_freeze_replaces_view_with_static_bundle(view):
    view({"type": "block_start", "index": 0, "block": "text"})
    view({"type": "block_delta", "index": 0, "text": "hi"})
    record = {
        "v": 1,
        "reply": "hi",
        "rounds": [{"text": "hi", "calls": []}],
        "stop": "interrupted",
        "usage": {},
    }
    view.freeze(record)
    ((data, kwargs),) = view.handle.updates
    assert set(data) == {"text/html", "text/markdown", "text/plain"}
    assert kwargs["metadata"] == {"elelem": record} and kwargs["raw"] is True
    assert any(m["msg_type"] == "comm_close" for m in CountingComm.sent)
    view({"type": "block_delta", "index": 0, "text": "late"})  # ignored after freeze


def test_clocks_tick_while_waiting_and_running(view):
    view({"type": "status", "state": "waiting", "model": "demo-1", "round": 1})
    with view._lock:  # the ticker redraws the clocks too, later on a loaded machine
        now = time.monotonic()
        view.waiting_since = now - 3.2
        view._clocks(now)
        status = view.status.value
    assert "waiting for demo-1" in status and "3 s" in status
    view(
        {
            "type": "block_start",
            "index": 0,
            "block": "tool_use",
            "id": "c",
            "name": "bash",
            "arguments": {"command": "sleep 9"},
        }
    )
    view({"type": "tool_state", "index": 0, "id": "c", "state": "running"})
    with view._lock:  # the header reads the clock itself: 2.46 s leaves 90 ms until "2.6 s"
        view.blocks[0].started = time.monotonic() - 2.46
        view._clocks(time.monotonic())
        header = view.blocks[0].header.value
    assert "running" in header and "2.5 s" in header
    assert HIDDEN in view.status._dom_classes  # the first block ended the wait


def test_footer_at_turn_end(view):
    view(
        {
            "type": "turn_end",
            "stop": "end_turn",
            "usage": {"input": 5, "output": 7},
            "rounds": 1,
            "ms": 1500,
        }
    )
    assert "in 5 · out 7 · 1.5 s · 1 round · done · demo/demo-1" in view.footer.value


def test_the_live_footer_shows_the_cost_like_the_frozen_one(view):
    end = {"type": "turn_end", "stop": "end_turn", "usage": {"input": 5}, "rounds": 1, "ms": 9}
    view({**end, "cost": 0.0123})
    assert "done · demo/demo-1 · $0.0123" in view.footer.value


def footer_after(view, seconds: float) -> str:
    """The footer once the turn has run `seconds`, read under the view's lock: its ticker
    redraws the clock too (4.1 s on a loaded machine)."""
    with view._lock:
        now = time.monotonic()
        view.started = now - seconds
        view._clocks(now)
        return view.footer.value


def test_a_working_line_shows_while_the_turn_runs(view):
    view({"type": "block_start", "index": 0, "block": "text"})
    footer = footer_after(view, 4)
    assert "demo/demo-1 · 4.0 s · working…" in footer


def test_freeze_closes_every_model_the_view_opened(view):
    view({"type": "block_start", "index": 0, "block": "text"})
    view({"type": "block_delta", "index": 0, "text": "hi"})
    view({"type": "block_stop", "index": 0})
    view(
        {
            "type": "block_start",
            "index": 1,
            "block": "tool_use",
            "id": "c",
            "name": "read",
            "arguments": {},
        }
    )
    view({"type": "block_stop", "index": 1})
    view(
        {
            "type": "block_start",
            "index": 2,
            "block": "tool_result",
            "id": "c",
            "ok": True,
            "content": "{}",
        }
    )
    view({"type": "block_stop", "index": 2})
    opened = [m for m in CountingComm.sent if m["msg_type"] == "comm_open"]
    assert opened, "the view opened no widget models"
    view.freeze({"stop": "end_turn", "rounds": [], "usage": {}})
    closed = [m for m in CountingComm.sent if m["msg_type"] == "comm_close"]
    assert len(closed) == len(opened)


@pytest.mark.timeout(30)  # joined once: seconds; quadratic: a minute or more
def test_a_long_text_block_in_small_deltas_is_kept_whole():
    import ipywidgets

    from elelem_kernel.render.block_widgets import TextBlock

    pieces = [f"{i % 10_000:04d}" for i in range(400_000)]
    block = TextBlock("text", ipywidgets)
    for piece in pieces:
        block.add(piece)
    assert block.text == "".join(pieces)


def test_a_notice_shows_above_the_blocks_and_an_image_in_its_card(view):
    view({"type": "block_start", "index": 0, "block": "text"})
    view({"type": "block_delta", "index": 0, "text": "hello"})
    view({"type": "block_stop", "index": 0})
    view({"type": "notice", "text": "MCP server 'x' failed: command not found: x\nstderr line"})
    first = view.body.children[0]
    assert "command not found" in first.value and "stderr line" in first.value
    call = {"type": "block_start", "index": 1, "block": "tool_use", "id": "c", "name": "t"}
    view({**call, "arguments": {}})
    view({"type": "block_stop", "index": 1})
    image = {"mime_type": "image/png", "data": "iVBORw0KGgo="}
    result = {"type": "block_start", "index": 2, "block": "tool_result", "id": "c", "ok": True}
    view({**result, "content": '{"ok": true}', "images": [image]})
    assert "data:image/png;base64,iVBORw0KGgo=" in values(view)


def test_the_html_parts_share_one_layout_and_one_style(view):
    import ipywidgets

    view({"type": "block_start", "index": 0, "block": "text"})
    view({"type": "block_delta", "index": 0, "text": "hi"})
    view({"type": "block_stop", "index": 0})
    call = {"type": "block_start", "index": 1, "block": "tool_use", "id": "c", "name": "read"}
    view({**call, "arguments": {"path": "a"}})
    stack, htmls = [view.box], []
    while stack:
        w = stack.pop()
        htmls += [w] if isinstance(w, ipywidgets.HTML) else []
        stack.extend(getattr(w, "children", ()))
    assert len(htmls) >= 5  # status, footer, the text, the card's header and arguments
    assert len({id(w.layout) for w in htmls}) == 1
    assert len({id(w.style) for w in htmls}) == 1
    opened = [m for m in CountingComm.sent if m["msg_type"] == "comm_open"]
    # two shared models + status, footer, box, body, text; the card: its box and its own
    # Layout (border, margin), header and arguments (its approval parts and its result
    # come when needed). Without sharing: 17.
    assert len(opened) == 11, [m["data"]["state"]["_model_name"] for m in opened]


def test_the_working_line_shows_the_estimated_meter_of_the_request_being_sent(view):
    context = {"used": 2_100, "window": 6_000, "estimated": True}
    view({"type": "status", "state": "waiting", "model": "demo-1", "context": context})
    view({"type": "block_start", "index": 0, "block": "text"})
    footer = footer_after(view, 4)
    assert "demo/demo-1 · 4.0 s · ctx ~2.1k/6.0k · working…" in footer


def test_the_meter_and_a_compaction_note_show_in_the_live_view(view):
    entry = {"upto": "t1", "turns": 3, "summary": "SUMMARY-TEXT", "before": 5000, "after": 900}
    view({"type": "compaction", **entry})
    assert view.body.children[0] is view.compaction
    assert "compacted 3 turns, 5.0k → 900 tokens" in values(view) and "SUMMARY-TEXT" in values(view)
    context = {"used": 1_234, "window": 6_000, "estimated": False}
    view({"type": "turn_end", "stop": "end_turn", "usage": {"input": 5}, "rounds": 1, "ms": 10,
          "context": context})  # fmt: skip
    assert "ctx 1.2k/6.0k" in view.footer.value


def test_a_box_s_children_only_grow_during_a_turn(view):
    """No child view is removed while the turn streams (issue 18 item 9).

    ipywidgets' BoxView posts a resize to each child view of a children update once they
    exist; a view a later update removed meanwhile is disposed, and the browser logs
    "Cannot read properties of null (reading 'processLuminoMessage')".
    """
    import ipywidgets

    shrunk = []

    def watch(widget):
        def changed(change):
            old, new = tuple(change["old"]), tuple(change["new"])
            if new[: len(old)] != old:
                shrunk.append((widget, old, new))
            for child in new:
                if isinstance(child, ipywidgets.Box) and child not in boxes:
                    boxes.add(child)
                    watch(child)

        widget.observe(changed, names="children")

    boxes = {view.box, view.body}
    watch(view.box)
    watch(view.body)
    view({"type": "status", "state": "waiting", "model": "demo-1", "round": 1})
    view({"type": "block_start", "index": 0, "block": "thinking"})
    view({"type": "block_delta", "index": 0, "text": "hmm"})
    view({"type": "block_stop", "index": 0})
    for i, name in ((1, "list"), (2, "read")):
        call = {"type": "block_start", "index": i, "block": "tool_use", "id": name, "name": name}
        view({**call, "arguments": {}})
        view({"type": "block_stop", "index": i})
    for i, name in ((3, "list"), (4, "read")):
        result = {"type": "block_start", "index": i, "block": "tool_result", "id": name}
        view({**result, "ok": True, "content": "{}"})
    view({"type": "status", "state": "waiting", "model": "demo-1", "round": 2})
    view({"type": "block_start", "index": 5, "block": "text"})
    view({"type": "block_delta", "index": 5, "text": "done"})
    view({"type": "block_stop", "index": 5})
    view({"type": "turn_end", "stop": "end_turn", "usage": {}, "rounds": 2, "ms": 10})
    assert len(view.body.children) == 4  # thinking, text, two cards: the view did fill
    assert shrunk == []
    assert HIDDEN in view.status._dom_classes


def test_a_finished_card_is_folded_as_the_frozen_output_shows_it(view):
    """Live and frozen agree on what is open: a finished call's card is the frozen card
    (folded to its summary line, its plot below the fold), so nothing jumps at the end."""
    from elelem_kernel.render.static import bundle
    from tests.pictures import png64

    result = json.dumps({"ok": True, "stdout": "drawn\n" * 40})
    image = {"mime_type": "image/png", "data": png64(4, 3), "width": 4, "height": 3}
    view({"type": "block_start", "index": 0, "block": "tool_use", "id": "c1", "name": "python"})
    view({"type": "tool_state", "index": 0, "id": "c1", "state": "running"})
    start = {"type": "block_start", "index": 1, "block": "tool_result", "id": "c1", "ok": True}
    view({**start, "content": result, "images": [image]})
    card = view.blocks[0]
    assert HIDDEN in card.header._dom_classes and HIDDEN in card.args._dom_classes
    live = card.result.value
    assert "<details>" in live and "<details open" not in live
    assert live.index("</details>") < live.index('<img src="data:image/png;base64,')
    call = {"name": "python", "arguments": {}, "result": result, "ok": True, "images": [image]}
    record = {"stop": "end_turn", "rounds": [{"text": "", "calls": [call]}]}
    frozen = bundle(record)[0]["text/html"]
    assert live.replace(" &nbsp;", "").split("</summary>")[1] in frozen


def test_a_call_waiting_for_the_person_says_so_and_keeps_its_clock(view):
    """While a diff waits in a cell, the card says for whom and where, not "running" with
    the cell's id; its clock keeps going; then it runs again."""
    arguments = {"cell": "6f1c0a52-3b1e-4c1e-9a51-1d2b8e0c7a11", "old": "1/0", "new": "1/1"}
    view(
        {
            "type": "block_start",
            "index": 0,
            "block": "tool_use",
            "id": "e",
            "name": "notebook_edit",
            "arguments": arguments,
        }
    )
    view({"type": "tool_state", "index": 0, "id": "e", "state": "running"})
    card = view.blocks[0]
    assert "6f1c0a52" not in card.header.value and "1/0" in card.header.value
    view.person("waiting for you: cell [5] above")
    assert card.state == "person" and "waiting for you: cell [5] above" in card.header.value
    started = card.started
    card.started = started - 3  # three seconds on: the next tick shows them
    view._clocks(time.monotonic())
    shown = re.search(r"(\d+\.\d) s<", card.header.value)
    assert shown and float(shown.group(1)) >= 3.0
    view.person(None)
    assert card.state == "running" and card.started == started - 3  # the same clock
    assert "waiting for you" not in card.header.value


def test_a_notebook_read_card_shows_a_summary_not_the_json():
    from elelem_kernel.render.call_text import result_text

    cells = [
        {"index": 0, "id": "t", "type": "markdown", "shown_as": "the 1st cell", "source": "# T"},
        {
            "index": 1,
            "id": "6f1c0a52-3b1e",
            "type": "code",
            "shown_as": "cell [5]",
            "source": "x = 1/0\nprint(x)",
            "outputs": ["ZeroDivisionError: division by zero\nTraceback ..."],
        },
    ]
    text = result_text(json.dumps({"ok": True, "path": "nb.ipynb", "cells": cells, "count": 2}))
    assert text.splitlines()[0] == "2 cells · 1 failing · path: nb.ipynb"
    assert "cell [5]: x = 1/0  ✗ ZeroDivisionError: division by zero" in text
    assert "6f1c0a52" not in text and '"source"' not in text


def test_a_tool_card_opens_each_widget_whole_and_folds_in_few_messages(view):
    """Every message of the live view goes before the open notebook's requests on the way
    to the page: a card's widgets open with their classes and first value (no update right
    after), and its result folds it with one message per widget it changes."""
    view({"type": "status", "state": "waiting", "model": "demo-1", "round": 1})
    start = len(CountingComm.sent)
    call = {"id": "c", "name": "notebook_run", "arguments": {"cells": [2]}}
    view({"type": "block_start", "index": 1, "block": "tool_use", **call})
    view({"type": "block_stop", "index": 1})
    made = CountingComm.sent[start:]
    # header, arguments, layout, card: no empty approval box, no empty result before them
    assert [m["msg_type"] for m in made].count("comm_open") == 4
    card = view.blocks[1]
    assert card.widget.children == (card.header, card.args)
    # only the waiting line hidden and the card placed in the view's body
    assert [m["msg_type"] for m in made].count("comm_msg") == 2
    view({"type": "tool_state", "index": 1, "state": "running"})
    start = len(CountingComm.sent)
    view({"type": "block_start", "index": 2, "block": "tool_result", "id": "c", "ok": True})
    folded = CountingComm.sent[start:]
    # header (summary and hidden), arguments hidden, the card's layout, the result opened
    # with its value, and added to the card
    assert len(folded) == 5, [m["data"] for m in folded]
    opened = [m for m in folded if m["msg_type"] == "comm_open"]
    assert len(opened) == 1 and "ok" in opened[0]["data"]["state"]["value"]
    assert card.widget.children == (card.header, card.args, card.result)
    assert HIDDEN in card.header._dom_classes and HIDDEN in card.args._dom_classes
    assert card.widget.layout.border_top == "none" and "elelem-card" in card.widget._dom_classes


def test_taking_back_a_note_never_said_sends_nothing(view):
    """An approval channel clears its note before asking (`note(index, None)`): on a card
    with no approval box yet that makes none, and sends nothing."""
    call = {"id": "c", "name": "write", "arguments": {"path": "a"}}
    view({"type": "block_start", "index": 1, "block": "tool_use", **call})
    card = view.blocks[1]
    start = len(CountingComm.sent)
    view.note(1, None)
    assert CountingComm.sent[start:] == []
    assert card.widget.children == (card.header, card.args)
    view.note(1, "answer where the cell ran")
    assert card.widget.children == (card.header, card.args, card.extra)
    assert "answer where the cell ran" in card.extra.children[0].value
    view.note(1, None)
    assert card.extra.children == ()
