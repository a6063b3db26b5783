"""TerminalApprover driven through real pipes and a real pseudo-terminal."""

from __future__ import annotations

import asyncio
import io
import os
import pty
import select

import pytest

from elelem_kernel.agent.approval import ApprovalRequest
from elelem_kernel.cli.terminal_approver import QUESTION, TerminalApprover

REQUEST = ApprovalRequest(
    id="c1",
    name="edit",
    kind="write",
    arguments={"path": "a.py", "old": "1", "new": "2"},
    preview="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2",
)


def ask(answers: str, request: ApprovalRequest = REQUEST) -> tuple[str, str]:
    """Answer through an OS pipe; return the decision and what the person saw."""
    read_end, write_end = os.pipe()
    os.write(write_end, answers.encode())
    os.close(write_end)
    out = io.StringIO()
    with os.fdopen(read_end) as stream_in:
        decision = asyncio.run(TerminalApprover(stream_in, out).approve(request))
    return decision, out.getvalue()


@pytest.mark.parametrize(
    ("answers", "decision"),
    [
        ("y\n", "allow"),
        ("YES\n", "allow"),
        ("n\n", "deny"),
        ("a\n", "always"),
        ("always\n", "always"),
    ],
)
def test_answers(answers: str, decision: str) -> None:
    assert ask(answers)[0] == decision


def test_shows_the_tool_and_the_preview_before_asking() -> None:
    _, seen = ask("y\n")
    assert (
        seen.index("edit wants to run (write)")
        < seen.index("  -x = 1\n  +x = 2")
        < seen.index(QUESTION)
    )
    assert "\x1b[" not in seen


def test_empty_answer_or_end_of_input_is_no() -> None:
    assert ask("\n")[0] == "deny"
    decision, seen = ask("")
    assert decision == "deny" and "no answer: not allowed" in seen


def test_unclear_answers_ask_again_then_deny() -> None:
    decision, seen = ask("maybe\na\n")
    assert decision == "always" and seen.count(QUESTION) == 2 and "Please answer y, n or a." in seen
    assert ask("what\nhuh\nerm\ny\n")[0] == "deny"


def test_long_previews_are_cut() -> None:
    long = ApprovalRequest("c2", "write", "write", {}, "\n".join(f"+{i}" for i in range(1000)))
    _, seen = ask("n\n", long)
    assert "+199" in seen and "+200" not in seen and "[... 800 more lines]" in seen


def test_through_a_real_terminal() -> None:
    master, slave = pty.openpty()
    try:
        os.write(master, b"a\n")
        with open(slave, closefd=False) as stream_in, open(slave, "w", closefd=False) as out:
            decision = asyncio.run(TerminalApprover(stream_in, out).approve(REQUEST))
        seen = b""
        while select.select([master], [], [], 0.5)[0]:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
        os.close(slave)
    text = seen.decode()
    assert decision == "always"
    assert QUESTION in text and "edit is allowed for the rest of this session" in text
    assert "\x1b[32m+x = 2\x1b[0m" in text  # a terminal gets the diff in colour


def test_escapes_in_the_preview_are_shown_where_they_are() -> None:
    spoof = ApprovalRequest(
        "c3", "bash", "execute", {}, "$ \x1b[2K\r$ ls -la; touch marker\n(in /w)\u202e"
    )
    _, seen = ask("n\n", spoof)
    assert "\x1b" not in seen and "\r" not in seen and "\u202e" not in seen
    assert "  $ \\x1b[2K\\r$ ls -la; touch marker\n  (in /w)\\u202e\n" in seen


def test_a_long_line_is_cut_with_a_note() -> None:
    wide = ApprovalRequest("c4", "bash", "execute", {}, "$ " + "x" * 100_000 + "\nnext")
    _, seen = ask("n\n", wide)
    assert "more characters]" in seen and "[... 1 more line]" in seen and len(seen) < 50_000


def test_waiting_for_an_answer_can_be_cancelled_and_leaves_no_reader_behind() -> None:
    read_end, write_end = os.pipe()

    async def cancel_then_answer(approver: TerminalApprover) -> str:
        waiting = asyncio.ensure_future(approver.approve(REQUEST))
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        os.write(write_end, b"y\n")  # the next question gets the next line
        return await approver.approve(REQUEST)

    try:
        with os.fdopen(read_end) as stream_in:
            approver = TerminalApprover(stream_in, io.StringIO())
            assert asyncio.run(cancel_then_answer(approver)) == "allow"
    finally:
        os.close(write_end)


def test_the_terminal_takes_the_same_words_as_the_notebook() -> None:
    from elelem_kernel.agent.approval import ANSWERS
    from elelem_kernel.jupyter.approval_channels import parse_answer

    for word, decision in ANSWERS.items():
        assert ask(f"{word.upper()}\n")[0] == decision == parse_answer(f" {word} ")
    assert ask("ok\n")[0] == "allow" and ask("deny\n")[0] == "deny"


def test_one_approver_serves_turns_on_different_loops_as_the_chat_runs_them():
    """`chat` runs each turn on a loop of its own; two questions at once on each still queue."""
    read_end, write_end = os.pipe()
    approver = TerminalApprover(os.fdopen(read_end), io.StringIO())

    async def two_at_once() -> list[str]:
        return list(await asyncio.gather(approver.approve(REQUEST), approver.approve(REQUEST)))

    for _ in range(2):  # the answers arrive while the first question waits on the loop
        os.write(write_end, b"y\nn\n")
        assert asyncio.run(two_at_once()) == ["allow", "deny"]
    os.close(write_end)
    approver.stream_in.close()
