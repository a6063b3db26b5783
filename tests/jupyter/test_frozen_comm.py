"""The `elelem.frozen` comm answers a page's cells with their turns' frozen outputs."""

from __future__ import annotations

from types import SimpleNamespace

from elelem_kernel.agent.conversation import Conversations
from elelem_kernel.jupyter import frozen_comm


def record(cell: str, reply: str) -> dict:
    return {
        "v": 1,
        "conversation": "c",
        "turn": f"t-{cell}",
        "cell": cell,
        "prompt": "hi",
        "reply": reply,
        "provider": "demo",
        "model": "demo",
    }


class Comm:
    def __init__(self):
        self.sent, self.closed = [], False

    def send(self, data):
        self.sent.append(data)

    def close(self):
        self.closed = True


def test_the_cells_whose_turns_the_session_holds_get_their_frozen_output():
    conversations = Conversations("replies")
    conversations.load({"c": [record("a", "first reply"), record("b", "two")]}, "c")
    session = SimpleNamespace(conversations=conversations)  # what the comm reads of one
    comm = Comm()
    message = {"content": {"data": {"v": 1, "cells": ["a", "z", 3]}}}
    frozen_comm._opened(session, comm, message)
    (answer,) = comm.sent
    assert list(answer["outputs"]) == ["a"]
    output = answer["outputs"]["a"]
    assert "first reply" in output["data"]["text/html"]
    assert output["metadata"]["elelem"]["cell"] == "a"
    assert comm.closed


def test_before_any_turn_or_with_nonsense_nothing_is_sent_but_an_empty_answer():
    assert frozen_comm.outputs(None, ["a"]) == {}
    conversations = Conversations("replies")
    conversations.load({"c": [record("a", "x")]}, "c")
    session = SimpleNamespace(conversations=conversations)
    assert frozen_comm.outputs(session, "a") == {}
    comm = Comm()
    frozen_comm._opened(session, comm, {"content": {}})
    assert comm.sent == [{"outputs": {}}] and comm.closed
