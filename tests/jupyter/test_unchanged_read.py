"""A run or an edit plans from the turn's last read while the page tells of no change.

The kernel's side of the `elelem.notebook` comm runs for real with a stand-in comm and a
page that answers as labextension/src/live.ts does: a read's answer says `watched`, and
`changed` is what the page sends at the first change to the code after it (watch.ts).
The browser side: tests/e2e/browser/test_first_turn.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from elelem_kernel.jupyter import notebook_comm
from elelem_kernel.tools import notebook_live
from tests import comm_schemas


class Page:
    """The page's side of one turn: answers each request at once, reads from `sources`;
    what the kernel asked is kept in `ops`, and `changed` is sent when `change_after` names
    the request after whose answer the person changes a cell."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, watched: bool = True) -> None:
        import comm as comm_package

        self.watched = watched
        self.sources = {"aaa": "x = 1", "bbb": "print(x)", "turn": "%%elelem\nrun it"}
        self.clipped: set[str] = set()
        self.ops: list[str] = []
        self.change_after: int | None = None
        self.comm: Any = None
        monkeypatch.setattr(comm_package, "create_comm", self._create)
        self.link = notebook_comm.NotebookLink("turn", "t-1")
        self.link.open()
        self.say({"type": "hello"})

    def _create(self, **kwargs: Any) -> Any:
        page = self

        class Comm:
            primary = False

            def on_msg(self, callback: Any) -> None:
                self.callback = callback

            def on_close(self, callback: Any) -> None:
                pass

            def open(self, data: Any = None) -> None:
                pass

            def send(self, data: Any) -> None:
                page.asked(data)

            def close(self) -> None:
                pass

        self.comm = Comm()
        return self.comm

    def say(self, data: dict) -> None:
        comm_schemas.check("elelem.notebook", "from_frontend", data)
        self.comm.callback({"content": {"data": data}})

    def asked(self, request: dict) -> None:
        self.say({"id": request["id"], "ack": True})
        if request["op"] == "ping":  # while an edit waits: only its ack counts
            return
        self.ops.append(request["op"])
        answer = getattr(self, request["op"])(request)
        self.say({"id": request["id"], "result": answer})
        if self.change_after == len(self.ops):
            self.sources["bbb"] = "print('changed')"
            self.say({"type": "changed"})  # on the same thread, before the kernel resumes

    def read(self, request: dict) -> dict:
        cells = []
        for cell_id, source in self.sources.items():
            cell = {"id": cell_id, "cell_type": "code", "source": source, "execution_count": None}
            cells.append({**cell, "clipped": True} if cell_id in self.clipped else cell)
        answer = {"path": "nb.ipynb", "dirty": False, "kernel": "python3", "cells": cells}
        return {**answer, "watched": True} if self.watched else answer

    def edit(self, request: dict) -> dict:
        return {"decision": "rejected", "reason": "not now"}

    def outputs(self, request: dict) -> dict:
        return {"shown": True}


def read_then_plan(page: Page, between: Any = None) -> notebook_live.RunPlan:
    """notebook_read, then what `between` does, then the plan of a run of cell `bbb`."""

    async def turn() -> notebook_live.RunPlan:
        await notebook_live.read_open(page.link, None)
        if between is not None:
            await between()
        return await notebook_live.plan_open(page.link, ["bbb"])

    try:
        return asyncio.run(turn())
    finally:
        page.link.close()


def code(plan: notebook_live.RunPlan) -> str:
    ((_index, _id, _source, ran),) = plan.cells
    return ran


def test_a_run_after_a_read_plans_from_it(monkeypatch):
    page = Page(monkeypatch)
    plan = read_then_plan(page)
    assert page.ops == ["read"]  # the page was asked once
    assert code(plan) == "print(x)"


def test_a_change_the_page_tells_of_is_read_again(monkeypatch):
    page = Page(monkeypatch)
    page.change_after = 1  # the person edits the cell right after the first read
    plan = read_then_plan(page)
    assert page.ops == ["read", "read"]
    assert code(plan) == "print('changed')"


def test_a_page_that_does_not_watch_is_read_again(monkeypatch):
    page = Page(monkeypatch, watched=False)  # an older extension: it never says `changed`
    page.sources["bbb"] = "print(1)"
    plan = read_then_plan(page)
    assert page.ops == ["read", "read"]
    assert code(plan) == "print(1)"


def test_a_read_with_a_cut_source_is_read_again(monkeypatch):
    page = Page(monkeypatch)
    page.clipped.add("aaa")
    read_then_plan(page)
    assert page.ops == ["read", "read"]


def test_a_request_that_may_change_the_notebook_drops_the_read(monkeypatch):
    page = Page(monkeypatch)

    async def edit() -> None:  # plans from the read too; the edit itself may change code
        await notebook_live.edit_open(page.link, True, "t-1", cell="aaa", source="x = 2")

    read_then_plan(page, edit)
    assert page.ops == ["read", "edit", "read"]


def test_notebook_read_always_asks_the_page(monkeypatch):
    page = Page(monkeypatch)

    async def twice() -> None:
        await notebook_live.read_open(page.link, None)
        await notebook_live.read_open(page.link, None)

    asyncio.run(twice())
    page.link.close()
    assert page.ops == ["read", "read"]
    assert page.link.unchanged_read() is None  # nothing kept once the turn ended


def test_an_answer_refused_for_its_size_is_not_kept(monkeypatch):
    page = Page(monkeypatch)
    monkeypatch.setattr(notebook_comm, "MAX_ANSWER", 10)
    with pytest.raises(Exception, match="too large"):
        read_then_plan(page)
    assert page.ops == ["read"]
    assert page.link.unchanged_read() is None


def test_a_read_older_than_fresh_is_read_again(monkeypatch):
    """A page reloaded (or its websocket reconnecting) cannot say `changed`: a read is
    used for a plan only while it is fresh."""
    page = Page(monkeypatch)
    monkeypatch.setattr(notebook_comm, "FRESH", 0.0)
    read_then_plan(page)
    assert page.ops == ["read", "read"]


def test_a_link_whose_page_is_gone_keeps_no_read(monkeypatch):
    page = Page(monkeypatch)

    async def read() -> None:
        await notebook_live.read_open(page.link, None)

    asyncio.run(read())
    assert page.link.unchanged_read() is not None
    page.link.lose("the page stopped answering pings")
    assert page.link.unchanged_read() is None
