"""The conversation: turn records in, the history the model is sent out."""

from __future__ import annotations

import pytest

from elelem_kernel.agent.conversation import Conversation


def turn(n: int, cell: str | None = None, **extra) -> dict:
    return {"turn": f"t{n}", "cell": cell, "prompt": f"q{n}", "reply": f"a{n}", **extra}


def texts(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages]


def test_replies_history_and_a_rerun_cell_replacing_its_turn():
    c = Conversation()
    c.add(turn(1, "x"))
    c.add(turn(2, "y"))
    c.add(turn(3, "x"))  # the cell x ran again
    assert [t["turn"] for t in c.turns] == ["t3", "t2"]
    assert texts(c.messages()) == ["q3", "a3", "q2", "a2"]
    assert texts(c.messages(cell="y")) == ["q3", "a3"]  # only what is above the cell


def test_forgotten_turns_and_the_budget_leave_turns_out():
    c = Conversation(turns=[turn(1), turn(2), turn(3)])
    c.forget(2)
    assert texts(c.messages()) == ["q1", "a1", "q3", "a3"]
    assert texts(c.messages(budget=60)) == ["q3", "a3"] and c.left_out(budget=60) == 1
    with pytest.raises(IndexError, match="there is no turn 4"):
        c.forget(4)


def test_an_undone_turn_is_not_sent_also_when_restored():
    c = Conversation(turns=[turn(1), turn(2, undone=True), turn(3)])  # as restored
    assert texts(c.messages()) == ["q1", "a1", "q3", "a3"]
    assert len(c.turns) == 3  # still there, shown as undone


def test_full_history_replays_rounds_with_their_tool_calls():
    call = {"id": None, "name": "read", "arguments": {"path": "a"}, "result": '{"ok": true}'}
    record = turn(1, rounds=[{"text": "", "calls": [call]}, {"text": "done", "calls": []}])
    messages = Conversation(turns=[record]).messages("full")
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["id"] == messages[2]["tool_call_id"] == "call_t1_0_0"
    assert messages[-1]["content"] == "done"
