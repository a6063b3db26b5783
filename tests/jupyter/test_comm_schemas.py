"""The three comms against their JSON Schemas (elelem_kernel/jupyter/comm_schemas/).

Each schema is valid, ships in the package and names its comm; its examples are messages
of their part. The kernel's side runs for real with a stand-in comm: every kind of message
it sends is checked against the schema, and it is answered with messages the schema
allows (a sample of each kind it accepts), which it must understand. The TypeScript side
is checked against the same schemas in tests/test_comm_protocol_ts.py and, as the real
extension sends them, in the browser (tests/e2e/browser/test_open_notebook.py).
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from types import SimpleNamespace
from typing import Any

import pytest

from elelem_kernel.jupyter import (
    notebook_comm,
    restore,
    restore_comm,
    undo,
    undoable_comm,
    warm_up,
)
from elelem_kernel.tools import notebook_live
from tests import comm_schemas
from tests.comm_schemas import PARTS, TARGETS, check, members, schema


class FakeComm:
    """A kernel-side comm that keeps what the kernel sends on it."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.opened: Any = None
        self.sent: list[Any] = []
        self.closed = False
        self.primary = False
        self.on_message: Any = None

    def on_msg(self, callback: Any) -> None:
        self.on_message = callback

    def on_close(self, callback: Any) -> None:
        pass

    def open(self, data: Any = None) -> None:
        self.opened = data

    def send(self, data: Any) -> None:
        self.sent.append(data)

    def close(self) -> None:
        self.closed = True


def test_each_comm_has_one_valid_schema_in_the_package():
    from jsonschema import Draft202012Validator

    folder = resources.files("elelem_kernel.jupyter").joinpath("comm_schemas")
    shipped = sorted(p.name for p in folder.iterdir() if p.name.endswith(".json"))
    assert shipped == sorted(f"{t}.json" for t in TARGETS)
    modules = {m.TARGET for m in (restore_comm, notebook_comm, undoable_comm)}
    assert modules == set(TARGETS)
    for target in TARGETS:
        found = schema(target)
        Draft202012Validator.check_schema(found)
        assert found["title"] == target
        assert found["x-opened-by"] in ("kernel", "frontend")
        assert "open" in found["$defs"]
        assert set(found["$defs"]) & set(PARTS) >= {"open", "from_kernel"}


def test_every_message_kind_has_examples_that_are_messages_of_its_part():
    titles: list[str] = []
    for target in TARGETS:
        defs = schema(target)["$defs"]
        titles += [d["title"] for d in defs.values() if "title" in d]
        for part in PARTS:
            if part not in defs:
                continue
            for name in members(target, part):
                examples = defs[name].get("examples")
                assert examples, f"{target}: {name} has no examples"
                for example in examples:
                    assert check(target, part, example) == defs[name]["title"] or name == "Result"
    assert len(titles) == len(set(titles)), "a title names one TypeScript type (protocol.ts)"


def test_a_message_the_schema_does_not_describe_is_refused():
    assert comm_schemas.errors("elelem.notebook", "from_frontend", {"id": 1, "ack": False})
    assert comm_schemas.errors("elelem.notebook", "from_kernel", {"id": 1, "op": "paint"})
    request = {"id": 2, "op": "edit", "action": "insert", "ask": True, "turn": None}
    request.update(label="a new cell", where="above", source="x")  # no index, new_id...
    assert comm_schemas.errors("elelem.notebook", "from_kernel", request)
    assert comm_schemas.errors("elelem.restore", "open", {"v": 1, "reason": "start"})
    assert comm_schemas.errors("elelem.restore", "from_frontend", {})  # it sends none


# -- elelem.restore and elelem.undoable: the frontend opens, the kernel answers once -----


@pytest.mark.parametrize("index", [0, 1])
def test_restore_answers_what_the_schema_says(index, monkeypatch):
    # no warm-up of this process: its frames made ahead would outlive the test
    monkeypatch.setattr(warm_up, "start", lambda then=None: None)
    data = schema("elelem.restore")["$defs"]["open"]["examples"][index]
    ip = SimpleNamespace(user_ns={})
    comm = FakeComm("elelem.restore")
    assert check("elelem.restore", "open", data) == "Restore"
    restore_comm._opened(ip, comm, {"content": {"data": data}})
    [answer] = comm.sent
    assert check("elelem.restore", "from_kernel", answer) == "Received"
    assert answer == {"received": len(data["notebook"]["cells"])} and comm.closed
    assert ip.user_ns[restore.FRONTEND_KEY]["features"] == data["features"]


@pytest.fixture
def secret_home(home, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    return home


def test_undoable_answers_a_query_with_the_turns_it_signed(secret_home):
    from elelem_kernel.store import signature
    from tests.records import record

    change = {"kind": "file", "action": "write", "path": "a.txt", "before": None}
    signed = record("t-own", changes=[change])
    signed["signature"] = signature.sign(signed)
    forged = {**signed, "turn": "t-forged", "signature": "hmac-sha256:" + "0" * 64}
    keys = ("turn", "conversation", "changes", "signature")
    query = {"v": 1, "records": [{k: r[k] for k in keys} for r in (signed, forged)]}
    comm = FakeComm("elelem.undoable")
    assert check(comm.target, "open", query) == "UndoableQuery"
    undoable_comm._opened(None, comm, {"content": {"data": query}})
    [answer] = comm.sent
    assert check(comm.target, "from_kernel", answer) == "UndoableTurns"
    assert answer == {"undoable": ["t-own"]}


def test_undoable_undoes_a_turn_and_says_what_undo_said(monkeypatch):
    from elelem_kernel.jupyter import shell_front

    asked: list[dict] = []

    class Front:
        def undo(self, **kwargs: Any) -> str:
            asked.append(kwargs)
            return "Undid the turn “fix it”."

    monkeypatch.setattr(shell_front, "front_for", lambda ip: Front())
    [data] = schema("elelem.undoable")["$defs"]["UndoRequest"]["examples"]
    ip = SimpleNamespace(user_ns={})
    comm = FakeComm("elelem.undoable")
    assert check(comm.target, "open", data) == "UndoRequest"
    undoable_comm._opened(ip, comm, {"content": {"data": data}})
    [answer] = comm.sent
    assert check(comm.target, "from_kernel", answer) == "UndoText"
    assert answer == {"text": "Undid the turn “fix it”."}
    assert asked == [{"turn": "t-1", "cell": "bbb"}]
    assert restore.FRONTEND_KEY in ip.user_ns  # the records came with it


# -- elelem.notebook: the kernel opens, asks, and the frontend answers ------------------

ERROR = {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero"}
ERROR["traceback"] = ["Traceback", "ZeroDivisionError: division by zero"]
CELLS = [
    {"id": "aaa", "cell_type": "markdown", "source": "# Title"},
    {"id": "bbb", "cell_type": "code", "source": "x = 1/0", "execution_count": 2},
    {"id": "ccc", "cell_type": "code", "source": "print(1)", "execution_count": None},
    {"id": "turn", "cell_type": "code", "source": "%%elelem\nfix it", "execution_count": None},
]
KEPT = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]


class Notebook:
    """The frontend's side of one turn's `elelem.notebook` comm, as the schema allows it:
    says hello, acknowledges each request and answers it; every message both ways is
    checked against the schema, and the kinds the kernel sent are kept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import comm as comm_package

        self.comm = FakeComm("elelem.notebook")
        self.kinds: list[str] = []
        self.requests: list[dict] = []
        self.refuse: set[str] = set()
        monkeypatch.setattr(comm_package, "create_comm", self._create)
        self.comm.send = self._request  # type: ignore[method-assign]
        self.link = notebook_comm.NotebookLink("turn", "t-1")
        self.link.open()
        self.kinds.append(check("elelem.notebook", "open", self.comm.opened))
        self._answer({"type": "hello"})

    def _create(self, **kwargs: Any) -> FakeComm:
        assert kwargs["target_name"] == "elelem.notebook"
        return self.comm

    def _answer(self, data: dict) -> None:
        check("elelem.notebook", "from_frontend", data)
        self.comm.on_message({"content": {"data": data}})

    def _request(self, data: Any) -> None:
        self.kinds.append(check("elelem.notebook", "from_kernel", data))
        self.requests.append(data)
        self._answer({"id": data["id"], "ack": True})
        if data["op"] in self.refuse:
            self._answer({"id": data["id"], "error": f"{data['op']} refused"})
            return
        result = getattr(self, data["op"])(data)
        self._answer({"id": data["id"], "result": result})

    def read(self, request: dict) -> dict:
        outputs = request.get("outputs", True)
        cells = []
        for cell in CELLS:
            shown = dict(cell)
            if cell["cell_type"] == "code":
                shown["outputs"] = [ERROR] if outputs and cell["id"] == "bbb" else []
            cells.append(shown)
        return {"path": "nb.ipynb", "dirty": True, "kernel": "python3", "cells": cells}

    def edit(self, request: dict) -> dict:
        if request["action"] == "replace":
            return {"decision": "applied", "outputs_before": KEPT, "execution_count_before": 2}
        if request["action"] == "delete":
            return {"decision": "rejected", "reason": "keep it"}
        return {"decision": "accepted"}

    def outputs(self, request: dict) -> dict:
        return {"shown": True}

    def revert(self, request: dict) -> dict:
        if request["action"] == "move":
            return {"reverted": False, "why": "the cell is gone"}
        return {"reverted": True}

    def mark_undone(self, request: dict) -> dict:
        return {"marked": 1}


EDITS = [
    {"cell": "bbb", "old": "1/0", "new": "1/1"},
    {"cell": "ccc", "source": "print(2)"},
    {"cell": "ccc", "cell_type": "markdown"},
    {"cell": "aaa", "insert": "after", "source": "# Notes", "cell_type": "markdown"},
    {"cell": "ccc", "delete": True},
    {"cell": "ccc", "move_to": 0},
]


def test_every_request_of_the_kernel_is_a_message_of_the_schema(monkeypatch):
    notebook = Notebook(monkeypatch)
    link = notebook.link

    async def turn() -> dict[str, Any]:
        shown = await notebook_live.read_open(link, None)
        edits = [await notebook_live.edit_open(link, True, "t-1", **e) for e in EDITS]
        plan = notebook_live.RunPlan("nb.ipynb", ((2, "ccc", "print(1)", "print(1)"),))
        ran = await notebook_live.run_plan(plan, link, {}, 10)
        done: list[str] = []
        left: list[str] = []
        for entry in [e["_undo"] for e in edits if "_undo" in e]:
            await undo._cell(link, entry, entry["label"], done, left)
            await undo._cell(link, undo.forward(entry), entry["label"], done, left)
        session = SimpleNamespace(conversation=SimpleNamespace(forgotten=set()))
        await undo._mark(session, link, {"turn": "t-1"}, True, left)  # type: ignore[arg-type]
        return {"shown": shown, "edits": edits, "ran": ran, "done": done, "left": left}

    outcome = asyncio.run(turn())
    link.close()

    kinds = set(notebook.kinds)
    requests = {
        schema("elelem.notebook")["$defs"][m]["title"]
        for m in members("elelem.notebook", "from_kernel")
    }
    assert kinds == requests | {"NotebookOpen"}
    actions = {r["action"] for r in notebook.requests if r["op"] == "edit"}
    assert actions == set(schema("elelem.notebook")["$defs"]["action"]["enum"])
    # and the kernel understood each answer
    assert [c["id"] for c in outcome["shown"]["cells"]] == ["aaa", "bbb", "ccc", "turn"]
    assert "ZeroDivisionError" in json.dumps(outcome["shown"])
    decisions = [e.get("decision") or e.get("declined") for e in outcome["edits"]]
    assert decisions == ["applied", "accepted", "accepted", "accepted", True, "accepted"]
    assert outcome["edits"][0]["_undo"]["outputs"] == KEPT
    assert outcome["ran"]["cells"][0]["outputs"] and "error" not in outcome["ran"]
    assert any("the cell is gone" in line for line in outcome["left"])
    assert outcome["done"]


def test_a_refused_request_is_the_frontends_error(monkeypatch):
    notebook = Notebook(monkeypatch)
    notebook.refuse.add("read")
    with pytest.raises(Exception, match="read refused"):
        asyncio.run(notebook_live.read_open(notebook.link, None))
    notebook.link.close()
