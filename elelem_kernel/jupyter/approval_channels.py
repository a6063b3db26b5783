"""Approval channels in a notebook: buttons in the card, `input()` over stdin, or policy.

While a cell runs, the kernel handles one shell message at a time, so a button click can
only reach it where the frontend sends comm messages on a kernel subshell (JupyterLab >=
4.4 and Notebook >= 7.4 with ipykernel 7). `input()` works where the frontend allows
stdin. Elsewhere (nbclient, papermill) nobody can be asked: the session's policy applies
(deny with a message saying how to allow, unless the mode is auto or the tool is allowed).

`choose_channel` makes the choice from facts about the kernel and the execute request:

| channel   | when |
|-----------|------|
| `buttons` | the kernel supports subshells and the request comes from a cell-aware frontend (it sends `cellId`) |
| `stdin`   | otherwise, when the request allows stdin |
| `policy`  | otherwise |

The button channel waits briefly for the frontend to open its comm subshell and falls
back to stdin (or a denial) when none appears, e.g. in an older JupyterLab. While it
waits, the card already says where the answer will be asked (`EITHER`), then `IN_THE_BOX`
once the input box is the way: never a card waiting with nothing to answer with. Where
the page with the buttons is known (`page`: the turn's link to it), a page closed or
reloaded while they wait ends the question `Declined` within seconds (jupyter/page_alive.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from elelem_kernel.agent.approval import (
    DECISIONS,
    ApprovalRequest,
    Decision,
    Declined,
    decision_for,
)
from elelem_kernel.jupyter.execute_request import ExecuteRequest
from elelem_kernel.jupyter.page_alive import Page, answer_or_gone
from elelem_kernel.render.approval_question import question

SUBSHELL_WAIT = 3.0  #: seconds to wait for the frontend's comm subshell
#: What the card says while it waits for the frontend's subshell, and after it gave up.
EITHER = (
    "Allow / Deny buttons appear here in a moment; a JupyterLab older than 4.4 (or "
    "Notebook 7.3) cannot take clicks while a cell runs and asks in an input box below "
    "instead: y(es) / n(o) / a(lways)."
)
IN_THE_BOX = (
    "Answer in the input box below: y(es) / n(o) / a(lways). Clicks cannot reach the "
    "kernel while a cell runs here (JupyterLab ≥ 4.4 or Notebook ≥ 7.4 with ipykernel ≥ 7 "
    "show buttons here)."
)


def choose_channel(kernel: Any, request: ExecuteRequest | Mapping[str, Any] | None) -> str:
    """`buttons`, `stdin` or `policy` for the execute request `request` (parsed, or the
    message) on `kernel`."""
    if not isinstance(request, ExecuteRequest):
        request = ExecuteRequest.parse(request)
    if supports_subshells(kernel) and request.cell_id:
        return "buttons"
    if request.allow_stdin:
        return "stdin"
    return "policy"


def supports_subshells(kernel: object) -> bool:
    """Whether `kernel` can run comm messages on subshells while a cell runs."""
    return bool(getattr(kernel, "_supports_kernel_subshells", False))


def subshells(kernel: Any) -> list[str]:
    """Ids of the subshells the frontend opened on `kernel` (none if unsupported)."""
    try:
        return list(kernel.shell_channel_thread.manager.list_subshell())
    except Exception:
        return []


def parse_answer(text: str) -> Decision:
    """What a typed answer means (`approval.ANSWERS`); anything unclear or empty is deny."""
    return decision_for(text) or "deny"


#: Runs a function on the thread waiting for the cell (where `input()` works); its future.
CallInMain = Callable[[Callable[[], str]], concurrent.futures.Future[str]]


class StdinApprover:
    """Asks with `input()`, run on the waiting main thread (where stdin and SIGINT work).

    A live `view` (a notebook without buttons) says in the call's card where to answer.
    """

    channel = "stdin"

    def __init__(self, call_in_main: CallInMain, view: object = None):
        self.call_in_main = call_in_main
        self.view = view

    async def approve(self, request: ApprovalRequest) -> Decision:
        note = getattr(self.view, "note", None)
        if note is not None:
            note(request.index, IN_THE_BOX)
        prompt = question(request)
        answer = await asyncio.wrap_future(self.call_in_main(lambda: input(prompt)))
        return parse_answer(answer)


class ButtonApprover:
    """Allow / Deny / Always buttons in the call's card of the live `view`."""

    channel = "buttons"

    def __init__(
        self,
        view: Any,
        kernel: Any,
        fallback: StdinApprover | None = None,
        wait: float = SUBSHELL_WAIT,
        memo: dict[str, bool] | None = None,
        page: Page | None = None,
    ):
        self.view = view
        self.kernel = kernel
        self.fallback = fallback
        self.wait = wait
        self.memo = memo if memo is not None else {}  #: kept by the front across turns
        self.page = page  #: the turn's link to the page with the buttons (page_alive.Page)

    async def approve(self, request: ApprovalRequest) -> Decision | Declined:
        if not subshells(self.kernel) and self.fallback is not None:
            self._say(request.index, IN_THE_BOX if self.memo.get("no_subshell") else EITHER)
        if not await self._subshell_ready():
            if self.fallback is not None:  # it says where to answer
                return await self.fallback.approve(request)
            return "deny"
        self._say(request.index, None)
        answer = self.view.ask(request.index, request.name)
        try:
            decision = await answer_or_gone(asyncio.wrap_future(answer), self.page, "approval")
            if decision in DECISIONS:
                return cast(Decision, decision)
            return Declined(decision)  # nobody can answer: the page went away
        finally:
            self.view.withdraw(request.index)

    def _say(self, index: int | None, text: str | None) -> None:
        """Where to answer, in the call's card (None: take the line away)."""
        note = getattr(self.view, "note", None)
        if note is not None:
            note(index, text)

    async def _subshell_ready(self) -> bool:
        # a frontend that opened no comm subshell before is not waited for again
        wait = 0.0 if self.memo.get("no_subshell") else self.wait
        deadline = time.monotonic() + wait
        while not subshells(self.kernel):
            if time.monotonic() >= deadline:
                self.memo["no_subshell"] = True
                return False
            await asyncio.sleep(0.05)
        self.memo.pop("no_subshell", None)
        return True


def approver_for(
    channel: str,
    *,
    view: Any,
    kernel: Any,
    call_in_main: CallInMain,
    allow_stdin: bool,
    memo: dict[str, bool] | None = None,
    page: Page | None = None,
) -> StdinApprover | ButtonApprover | None:
    """The approver for `channel`; None for `policy` (the session's own rules apply).
    `page`: the turn's link to the page, whose leaving ends a question on its buttons."""
    stdin = StdinApprover(call_in_main, view) if allow_stdin else None
    if channel == "buttons" and view is not None and hasattr(view, "ask"):
        return ButtonApprover(view, kernel, fallback=stdin, memo=memo, page=page)
    if channel in ("buttons", "stdin") and stdin is not None:
        return stdin
    return None
