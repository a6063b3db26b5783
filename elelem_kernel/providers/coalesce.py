"""One text event per network read: a provider's consecutive text pieces, joined.

A server that writes faster than the client reads (a local model, a loopback test, any
backlog) packs tens of events into one read of the response. Each of them used to walk
the whole way on its own: the session's reply, record and blocks, then the renderer (a
live widget's view, the terminal's writes), ~100k instructions an event. `Coalescing`
stands between a provider's parser and the session: consecutive `saying` pieces (or
`thinking` pieces without metadata) are held and handed on as one event carrying their
joined text when the read's events are all fed (`flush`), or sooner, before any other
event. The person sees the same text at the granularity of the network's reads; what
every other event says, and the order of all, is unchanged (DESIGN's events contract:
a `saying` event is "a piece of the reply", of any length).

Nothing waits for more data: the caller flushes after each read's events, before it
awaits the next read, so a stream that arrives event by event is handed on event by
event, and a stop (cancel) finds nothing held.
"""

from __future__ import annotations

from elelem_kernel.events import Emit, ProviderEvent, Saying, Thinking


class Coalescing:
    """An `Emit` that joins consecutive text pieces of one kind until `flush()`."""

    __slots__ = ("emit", "first", "texts")

    def __init__(self, emit: Emit):
        self.emit = emit
        #: The first held piece (handed on as it is when no other joins it), or None.
        self.first: Saying | Thinking | None = None
        self.texts: list[str] = []

    def __call__(self, event: ProviderEvent) -> None:
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
            return
        self.flush()
        self.emit(event)

    def flush(self) -> None:
        """Hand on the held pieces as one event (its text joined), if any are held."""
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
