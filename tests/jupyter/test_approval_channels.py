from __future__ import annotations

import asyncio
import concurrent.futures
from types import SimpleNamespace

from elelem_kernel.agent.approval import ApprovalRequest
from elelem_kernel.jupyter.approval_channels import (
    ButtonApprover,
    StdinApprover,
    approver_for,
    choose_channel,
    parse_answer,
)
from elelem_kernel.render.approval_question import question


def kernel(subshells=True, opened=()):
    manager = SimpleNamespace(list_subshell=lambda: list(opened))
    return SimpleNamespace(
        _supports_kernel_subshells=subshells, shell_channel_thread=SimpleNamespace(manager=manager)
    )


def request(index=3):
    return ApprovalRequest(
        "c1", "shell", "execute", {"command": "rm -rf build"}, "$ rm -rf build", index
    )


LAB = {"metadata": {"cellId": "abc"}, "content": {"allow_stdin": True}}
CONSOLE = {"metadata": {}, "content": {"allow_stdin": True}}
HEADLESS = {"metadata": {}, "content": {"allow_stdin": False}}


def test_channel_choice():
    assert choose_channel(kernel(), LAB) == "buttons"
    assert choose_channel(kernel(subshells=False), LAB) == "stdin"
    assert choose_channel(kernel(), CONSOLE) == "stdin"
    assert choose_channel(kernel(), HEADLESS) == "policy"
    assert choose_channel(None, None) == "policy"


def test_approver_for_each_channel():
    view = SimpleNamespace(ask=lambda *a: None)
    make = lambda channel, stdin: approver_for(  # noqa: E731
        channel, view=view, kernel=kernel(), call_in_main=lambda fn: None, allow_stdin=stdin
    )
    buttons = make("buttons", True)
    assert isinstance(buttons, ButtonApprover) and isinstance(buttons.fallback, StdinApprover)
    assert isinstance(make("stdin", True), StdinApprover)
    assert make("policy", False) is None  # the session's own rules: deny with NO_CHANNEL


def test_answers():
    assert parse_answer("y") == parse_answer(" Yes ") == "allow"
    assert parse_answer("a") == parse_answer("always") == "always"
    assert parse_answer("") == parse_answer("no") == parse_answer("whatever") == "deny"
    assert question(request()).startswith("Allow shell: $ rm -rf build? [y]es")


def test_stdin_asks_on_the_main_thread():
    asked = []

    def call_in_main(fn):
        future = concurrent.futures.Future()
        future.set_result(fn())
        return future

    approver = StdinApprover(call_in_main)
    import builtins

    original = builtins.input
    builtins.input = lambda prompt: asked.append(prompt) or "a"
    try:
        assert asyncio.run(approver.approve(request())) == "always"
    finally:
        builtins.input = original
    assert "rm -rf build" in asked[0]


class View:
    def __init__(self, answer):
        self.answer = answer
        self.withdrawn = []

    def ask(self, index, name):
        future = concurrent.futures.Future()
        future.set_result(self.answer)
        return future

    def withdraw(self, index):
        self.withdrawn.append(index)


def test_buttons_use_the_card_when_the_frontend_has_a_subshell():
    view = View("allow")
    approver = ButtonApprover(view, kernel(opened=["s1"]), wait=0.1)
    assert asyncio.run(approver.approve(request(7))) == "allow"
    assert view.withdrawn == [7]


def test_buttons_fall_back_when_no_subshell_appears():
    fallback = SimpleNamespace(approve=lambda r: _done("always"))
    approver = ButtonApprover(View("allow"), kernel(opened=[]), fallback=fallback, wait=0.1)
    assert asyncio.run(approver.approve(request())) == "always"
    assert (
        asyncio.run(ButtonApprover(View("allow"), kernel(), wait=0.1).approve(request())) == "deny"
    )


async def _done(value):
    return value


def test_a_frontend_without_subshells_is_not_waited_for_twice():
    memo = {}
    fallback = SimpleNamespace(approve=lambda r: _done("allow"))
    slow = ButtonApprover(View("deny"), kernel(opened=[]), fallback=fallback, wait=0.2, memo=memo)
    assert asyncio.run(slow.approve(request())) == "allow"
    assert memo == {"no_subshell": True}
    again = ButtonApprover(View("deny"), kernel(opened=[]), fallback=fallback, wait=30, memo=memo)
    assert asyncio.run(asyncio.wait_for(again.approve(request()), 5)) == "allow"
    now = ButtonApprover(View("always"), kernel(opened=["s"]), fallback=fallback, memo=memo)
    assert asyncio.run(now.approve(request())) == "always" and memo == {}


def test_the_stdin_question_shows_the_whole_preview_before_asking():
    tail = "x" * 300 + " && touch end-marker"
    long = ApprovalRequest(
        "c2", "bash", "execute", {}, f"$ echo {tail}\n(in /w; killed after 120 s)"
    )
    asked = question(long)
    lines = asked.split("\n")
    assert lines[0] == "bash wants to run (execute):"
    assert lines[1] == f"  $ echo {tail}" and lines[2] == "  (in /w; killed after 120 s)"
    assert lines[3] == "Allow bash? [y]es / [n]o / [a]lways for bash: "


def test_the_stdin_question_shows_escapes_instead_of_obeying_them():
    spoof = ApprovalRequest("c3", "bash", "execute", {}, "$ \x1b[2K\r$ ls -la; touch marker")
    asked = question(spoof)
    assert "\x1b" not in asked and "\r" not in asked
    assert "$ \\x1b[2K\\r$ ls -la; touch marker" in asked


def test_the_stdin_question_is_bounded_with_a_note():
    many = ApprovalRequest("c4", "bash", "execute", {}, "\n".join(f"echo {i}" for i in range(500)))
    asked = question(many)
    assert "  echo 199\n" in asked and "echo 200" not in asked
    assert "  [... 300 more lines]\nAllow bash?" in asked
    wide = ApprovalRequest("c5", "write", "write", {}, "y" * 50_000)
    asked = question(wide)
    assert len(asked) < 21_000 and "[... 30000 more characters]" in asked
