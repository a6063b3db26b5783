"""The view of a turn in a cell's output, for whoever watches the cell run.

`new_view` picks one by the watcher the notebook front found (`widgets`, `text` or
`nobody`): the live widget, text streamed to a console, or nothing until the end. Each
ends with `freeze(record)`, which shows the finished turn as its static output (the bundle
a notebook saves), also after an error or an interrupt.
"""

from __future__ import annotations

import sys
from typing import Any

from elelem_kernel.agent.blocks import BlockEvent
from elelem_kernel.agent.record import TurnRecord
from elelem_kernel.render.static import bundle


def new_view(watcher: str, provider: str, model: str | None) -> Any:
    """The view for `watcher`: a live `TurnView` for `widgets` (the output at the end when
    ipywidgets is missing), a `TextView` for `text`, else an `EndView`."""
    if watcher == "widgets":
        try:
            from elelem_kernel.render.widget import (
                TurnView,  # lazy: ipywidgets, only for a live view
            )

            view = TurnView(provider=provider, model=model)
        except ImportError:  # no ipywidgets: the output still comes, at the end
            return EndView()
        view.show()
        return view
    if watcher == "text":
        return TextView()
    return EndView()


class EndView:
    """Nobody watches (terminal IPython, headless runs) or no widgets: output at the end."""

    def __call__(self, event: BlockEvent) -> None:
        pass

    def freeze(self, record: TurnRecord) -> None:
        from IPython.display import display  # lazy: only a kernel's turn shows outputs

        data, metadata = bundle(record)
        display(data, metadata=metadata, raw=True)


class TextView(EndView):
    """A person at a text client (jupyter console): the turn streams as terminal text.

    The reply's Markdown is rendered as text a line at a time (`MarkdownStream`), and the
    kernel's stream is pushed at most every `INTERVAL` seconds, as the live view does: a
    few messages a second, not one per token. The frozen turn still ends the output as a
    full `display_data`, the same bundle a notebook saves.
    """

    def __init__(self) -> None:
        from elelem_kernel.render.markdown_text import MarkdownStream  # lazy: text clients only
        from elelem_kernel.render.terminal_view import TerminalRenderer  # lazy: text clients only

        out = sys.stdout  # the kernel's stream for this cell, also from the loop thread
        self.text = MarkdownStream(out)
        quiet: Any = (Quiet(self.text), Quiet(out))  # file-like enough for the renderer
        self.renderer = TerminalRenderer(out=quiet[0], err=quiet[1], color=False)
        self.kinds: dict[int, str] = {}

    def __call__(self, event: BlockEvent) -> None:
        if event["type"] == "block_start":
            self.kinds[event["index"]] = event["block"]
        streaming = event["type"] == "block_delta" and self.kinds.get(event["index"]) == "text"
        if not streaming:
            self.text.finish()  # a table or line held back goes before what comes next
        if event["type"] != "turn_end":  # the frozen output below carries the footer
            self.renderer(event)

    def freeze(self, record: TurnRecord) -> None:
        self.text.finish()
        super().freeze(record)


class Quiet:
    """`out` whose `flush` waits for the stream's own pushes (the renderer flushes at every
    piece; a kernel stream sends a message at every flush)."""

    def __init__(self, out: Any):
        self.out = out

    def write(self, text: str) -> int:
        self.out.write(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
