"""One text event per network read: a provider's consecutive text pieces, joined.

A server that writes faster than the client reads (a local model, a loopback test, any
backlog) leaves tens of events in each read of the response. Each of them used to walk
the whole way on its own: the session's reply, record and blocks, then the renderer (a
live widget's view, the terminal's writes), ~100k instructions an event. `Coalescing`
stands between a provider's parser and the session: consecutive `saying` pieces (or
`thinking` pieces without metadata) are held and handed on as one event carrying their
joined text, before any other event, and at the latest when the reading task waits.

The reading task waits at a network read and nowhere else while it cuts and parses what
a read brought (httpx hands on one HTTP chunk at a time, all of them from its buffer
without a wait), so "before it waits" is "once per network read": the hand-on is a
callback run on the loop's next turn, which comes as soon as the task awaits the network
and before the task resumes. Nothing waits for more data, a stream that arrives event by
event is handed on event by event, and a stop (cancel) finds nothing held. What every
other event says, and the order of all, is unchanged (DESIGN's events contract: a
`saying` event is "a piece of the reply", of any length).
"""

from __future__ import annotations

import asyncio

from elelem_kernel.events import Emit, ProviderEvent, Saying, Thinking


class Coalescing:
    """An `Emit` that joins consecutive text pieces of one kind until the loop's next turn
    (or `flush()`, or another event)."""

    __slots__ = ("due", "emit", "failed", "first", "texts")

    def __init__(self, emit: Emit):
        self.emit = emit
        #: The first held piece (handed on as it is when no other joins it), or None.
        self.first: Saying | Thinking | None = None
        self.texts: list[str] = []
        #: Whether a hand-on is scheduled on the loop's next turn.
        self.due = False
        #: What `emit` raised in a scheduled hand-on, raised in the reading task next.
        self.failed: Exception | None = None

    def __call__(self, event: ProviderEvent) -> None:
        if self.failed is not None:
            self.flush()
        # A piece of text and nothing else: a thinking event's metadata closes its block.
        if (event["type"] == "saying" or event["type"] == "thinking") and len(event) == 2:
            first = self.first
            if first is not None and first["type"] == event["type"]:
                if not self.texts:
                    self.texts.append(first["text"])
                self.texts.append(event["text"])
                return
            self.flush()
            self.first = event
            if not self.due:
                self.due = True
                asyncio.get_running_loop().call_soon(self._scheduled)
            return
        self.flush()
        self.emit(event)

    def flush(self) -> None:
        """Hand on the held pieces as one event (their text joined), if any are held."""
        if self.failed is not None:
            failed, self.failed = self.failed, None
            raise failed
        first = self.first
        if first is None:
            return
        texts = self.texts
        self.first, self.texts = None, []
        if not texts:
            self.emit(first)
        elif first["type"] == "saying":
            self.emit({"type": "saying", "text": "".join(texts)})
        else:
            self.emit({"type": "thinking", "text": "".join(texts)})

    def _scheduled(self) -> None:
        """The loop's turn came: the reading task is waiting for the network."""
        self.due = False
        try:
            self.flush()
        except Exception as e:  # the task's next call raises it, as a direct emit would
            self.failed = e
