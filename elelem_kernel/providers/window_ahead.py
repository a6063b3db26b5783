"""A local server's window asked before a turn needs it, and kept for that turn.

A session asks a local server for its context window (`HTTPProvider.ask_window`) before
its first request: two or three model-info requests that the first turn after a kernel
start otherwise waits for. A front that knows a turn is coming (a notebook page has
linked the kernel) asks ahead with the provider the session will make (`remember`), and
the session's own question then takes that answer (`recall`): once, while it is fresh
(`FRESH`), and only for the same server and model. An answer is kept only
when the server answered (a server not started yet is asked again by the turn), and a
window that is wrong after all is corrected by the server's own refusal, as always.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from elelem_kernel.providers.http import HTTPProvider

#: Seconds an answer asked ahead is used for (a server restarted with another window
#: later is asked again).
FRESH = 600.0


class Answer(NamedTuple):
    """What a server said of its window: the window (None: it did not say), the notes it
    gave the provider, and when (`time.monotonic`)."""

    window: int | None
    notes: tuple[str, ...]
    at: float


_lock = threading.Lock()
_answers: dict[tuple[str, str], Answer] = {}


def _key(provider: HTTPProvider) -> tuple[str, str]:
    return (provider.base_url, provider.model)


async def remember(provider: HTTPProvider) -> Answer | None:
    """Ask `provider`'s server for its window now and keep the answer for the session's
    own question; the answer (None when the server could not be reached)."""
    provider.answered = False
    window = await provider.ask_window()
    if not provider.answered:
        return None
    answer = Answer(window, tuple(provider.notes), time.monotonic())
    with _lock:
        _answers[_key(provider)] = answer
    return answer


def recall(provider: HTTPProvider) -> Answer | None:
    """The fresh answer asked ahead for `provider`'s server and model, taken (the
    next question asks the server again); its notes are added to the provider's."""
    with _lock:
        answer = _answers.pop(_key(provider), None)
    if answer is None or time.monotonic() - answer.at > FRESH:
        return None
    provider.notes.extend(note for note in answer.notes if note not in provider.notes)
    return answer


def forget() -> None:
    """Drop every answer kept (the tests start from none)."""
    with _lock:
        _answers.clear()
