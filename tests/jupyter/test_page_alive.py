"""A question whose page went away ends declined within seconds (issue 36 item 2); a
front that never answered pings keeps waiting as before."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from elelem_kernel.agent.approval import ApprovalRequest, Declined
from elelem_kernel.jupyter import page_alive
from elelem_kernel.jupyter.approval_channels import ButtonApprover
from elelem_kernel.jupyter.notebook_comm import FrontendGone, NotebookLink
from tests.jupyter.test_approval_channels import kernel


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(page_alive, "PING_EVERY", 0.02)
    monkeypatch.setenv("ELELEM_PAGE_GONE", "0.2")


class Page:
    """A page that said hello (or not) and answers `answers` pings, then none."""

    def __init__(self, hello=True, answers=2):
        self.hello = hello
        self.answers = answers
        self.lost = None
        self.pings = 0

    def answering(self):
        return self.hello

    async def ping(self, timeout):
        self.pings += 1
        if self.pings <= self.answers:
            return True
        await asyncio.sleep(timeout)
        return False

    def lose(self, why):
        self.lost = why


class View:
    """Buttons nobody clicks (or clicked after `click` seconds)."""

    def __init__(self, click=None):
        self.click = click
        self.withdrawn = []

    def ask(self, index, name):
        future = concurrent.futures.Future()
        if self.click is not None:
            threading.Timer(self.click, lambda: future.set_result("allow")).start()
        return future

    def withdraw(self, index):
        self.withdrawn.append(index)


def ask(page, view):
    approver = ButtonApprover(view, kernel(opened=["s1"]), wait=0.1, page=page)
    call = ApprovalRequest("c1", "write", "write", {"path": "x.md"}, "write x.md", 4)
    return approver.approve(call)


def test_an_approval_whose_page_stops_answering_ends_declined_saying_why():
    page, view = Page(answers=2), View()
    decision = asyncio.run(asyncio.wait_for(ask(page, view), 5))
    assert isinstance(decision, Declined)
    assert decision.startswith("declined: the page showing this approval was closed or reloaded")
    assert page.lost == decision  # later questions of the turn end at once
    assert view.withdrawn == [4]


def test_a_page_that_never_said_hello_is_waited_for_as_before():
    view = View(click=0.6)  # three times the time that ends a silent page's question
    assert asyncio.run(asyncio.wait_for(ask(Page(hello=False), view), 5)) == "allow"


def test_a_page_that_keeps_answering_is_waited_for():
    view = View(click=0.6)
    assert asyncio.run(asyncio.wait_for(ask(Page(answers=10_000), view), 5)) == "allow"


def test_no_page_means_no_watch():
    assert asyncio.run(asyncio.wait_for(ask(None, View(click=0.3)), 5)) == "allow"


def test_the_wait_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ELELEM_PAGE_GONE", "nonsense")
    assert page_alive.gone_after() == page_alive.GONE_AFTER
    monkeypatch.setenv("ELELEM_PAGE_GONE", "2.5")
    assert page_alive.gone_after() == 2.5


class Comm:
    """The comm of a page that acks `edit` but never answers it, and acks pings while
    `alive`."""

    def __init__(self):
        self.link = None
        self.alive = True
        self.sent = []

    def send(self, data):
        self.sent.append(data)
        if data.get("op") == "edit" or (data.get("op") == "ping" and self.alive):
            reply = {"content": {"data": {"id": data["id"], "ack": True}}}
            threading.Timer(0.01, self.link._received, (reply,)).start()


def linked() -> tuple[NotebookLink, Comm]:
    link, comm = NotebookLink("cell-1"), Comm()
    comm.link = link
    link._comm = comm
    link._received({"content": {"data": {"type": "hello"}}})
    return link, comm


def test_a_diff_whose_page_stops_answering_ends_gone():
    link, comm = linked()
    threading.Timer(0.2, lambda: setattr(comm, "alive", False)).start()
    answer = asyncio.run(asyncio.wait_for(link.request("edit", timeout=None, ask=True), 5))
    assert answer["decision"] == "gone"
    assert "this diff was closed or reloaded" in answer["reason"]
    assert any(m.get("op") == "ping" for m in comm.sent)
    with pytest.raises(FrontendGone, match="closed or reloaded"):
        asyncio.run(link.request("read"))  # at once, not after the ack timeout


def test_an_edit_without_asking_sends_no_pings():
    link, comm = linked()
    comm.alive = False

    async def edit():
        return await asyncio.wait_for(link.request("edit", timeout=0.5, ask=False), 5)

    with pytest.raises(FrontendGone, match="no answer in"):
        asyncio.run(edit())
    assert not any(m.get("op") == "ping" for m in comm.sent)
