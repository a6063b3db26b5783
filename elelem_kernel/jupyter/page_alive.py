"""Whether the page that shows a turn's open question is still there to answer it.

A question (Allow / Deny buttons in a card, a diff to accept in a cell) waits for a click
in the page that ran the turn. When that page is reloaded or closed, nothing will ever
click: its buttons went with it, and a reloaded page cannot even learn the kernel's state
while the turn holds the main shell (the kernel's status "Unknown", "Loading widget…").
So while a question is open the kernel pings that page every `PING_EVERY` seconds over
the turn's `elelem.notebook` comm (jupyter/notebook_comm.py); the extension acknowledges
every request at once, on its comm subshell. A page that said hello and then leaves the
pings unanswered for `GONE_AFTER` seconds is gone: the question ends declined, saying why
(`gone`), and the turn goes on without it.

A front that never said hello (no extension, VS Code, nbclient) is never judged: its
questions wait as they always did.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable
from typing import Protocol, TypeVar

PING_EVERY = 1.0  #: seconds between pings while a question is open
GONE_AFTER = 6.0  #: seconds without an answer after which the page is gone (ELELEM_PAGE_GONE)

T = TypeVar("T")


class Page(Protocol):
    """The page side of a turn, as the notebook comm offers it."""

    #: why the page is known to be gone, or None
    lost: str | None

    def answering(self) -> bool:
        """Whether the page said hello: it answers pings."""
        ...

    async def ping(self, timeout: float) -> bool:
        """Whether the page acknowledged one ping within `timeout` seconds."""
        ...

    def lose(self, why: str) -> None:
        """Mark the page gone: pending and later requests fail with `why`."""
        ...


def gone(what: str) -> str:
    """What the model and the person read when the page left during the question `what`."""
    return (
        f"declined: the page showing this {what} was closed or reloaded, so nobody could "
        "answer it; ask again in the next turn if it is still wanted"
    )


def gone_after() -> float:
    """`GONE_AFTER`, or ELELEM_PAGE_GONE seconds when that is set to a positive number."""
    try:
        value = float(os.environ.get("ELELEM_PAGE_GONE", GONE_AFTER))
    except ValueError:
        return GONE_AFTER
    return value if value > 0 else GONE_AFTER


async def until_gone(
    page: Page | None, every: float | None = None, after: float | None = None
) -> str:
    """Return (the reason, "" for the usual one) once `page` stops answering; wait forever
    where it never answered, so a question there waits as before."""
    every = PING_EVERY if every is None else every
    after = gone_after() if after is None else after
    if page is None:
        await asyncio.Event().wait()
    assert page is not None
    last = time.monotonic()
    while True:
        if page.lost:
            return page.lost
        began = time.monotonic()
        if not page.answering():
            last = began  # a page that never said hello is never judged
        elif await page.ping(timeout=max(every, 0.1)):
            last = time.monotonic()
        elif time.monotonic() - last >= after:
            return ""
        await asyncio.sleep(max(0.0, every - (time.monotonic() - began)))


async def answer_or_gone(answer: Awaitable[T], page: Page | None, what: str) -> T | str:
    """`answer`'s value, or the `gone` reason when the page left first (then the page is
    marked lost, so later questions in the turn end at once)."""
    waiting = asyncio.ensure_future(answer)
    watching = asyncio.ensure_future(until_gone(page))
    try:
        done, _ = await asyncio.wait({waiting, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (waiting, watching):
            if not task.done():
                task.cancel()
    if waiting in done:
        return waiting.result()
    why = watching.result() or gone(what)
    if page is not None and not page.lost:
        page.lose(why)
    return why
