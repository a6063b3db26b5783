"""Cell outputs for notebook_run, bounded while the cell runs.

nbclient keeps every output of every cell: a cell that printed 200 MB held 400 MB here,
though the model is shown 2,000 characters of it. This client keeps, per cell, a stream's
head and tail (consecutive pieces of one stream are joined, the middle counted), the first
`HEAD_OUTPUTS` outputs and the last `TAIL_OUTPUTS`, and each output's data values up to
`DATA_CHARS` (their full size noted), and says for each cell what it left out.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from elelem_kernel.tools.notebooks import IMAGE_TYPES, OUTPUT_CHARS

#: Characters kept from the start and the end of one stream: with the cut marker they fit
#: the `OUTPUT_CHARS` the summary shows, so the summary keeps both ends.
STREAM_HEAD = OUTPUT_CHARS // 2
STREAM_TAIL = OUTPUT_CHARS // 2 - 100
#: Outputs kept per cell: the first ones and the last ones.
HEAD_OUTPUTS = 20
TAIL_OUTPUTS = 5
#: Characters kept of one data value (a result's text/plain, an SVG).
DATA_CHARS = 20_000
#: Base64 characters kept of one PNG, JPEG, GIF or WebP output (a cut one is not sent).
IMAGE_CHARS = 4_000_000


class Ends:
    """The head and tail of a growing text, and how many characters came in all."""

    def __init__(self, head: int = STREAM_HEAD, tail: int = STREAM_TAIL):
        self.head_limit, self.tail_limit = head, tail
        self.head = self.tail = ""
        self.total = 0

    def feed(self, text: str) -> None:
        self.total += len(text)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text[-self.tail_limit :])[-self.tail_limit :]

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        if not self.cut:
            return self.head + self.tail
        return (
            f"{self.head}\n[... {self.cut:,} characters cut from the middle of "
            f"{self.total:,} ...]\n{self.tail}"
        )


@dataclass
class CellCuts:
    """What one cell's outputs lost."""

    dropped: int = 0  #: outputs left out between the first and the last ones
    #: characters printed to each stream (by name) in the outputs that were cut
    streams: dict[str, int] = field(default_factory=dict)
    data: int = 0  #: data values shortened

    def note(self) -> str | None:
        """One line for the model, or None when nothing was cut."""
        parts = [
            f"{name}: {total:,} characters printed, kept the first {STREAM_HEAD:,} and the "
            f"last {STREAM_TAIL:,}"
            for name, total in self.streams.items()
        ]
        if self.dropped:
            parts.append(
                f"{_count(self.dropped, 'output')} left out after the first {HEAD_OUTPUTS} "
                f"(the last {TAIL_OUTPUTS} are kept)"
            )
        if self.data:
            parts.append(f"{_count(self.data, 'output value')} cut to {DATA_CHARS:,} characters")
        return "; ".join(parts) or None


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def bounded_client(nb: Any, cuts: dict[int, CellCuts], **options: Any) -> Any:
    """A `NotebookClient` for `nb` that bounds outputs as they come, noting cuts in `cuts`."""
    return _client_class()(nb, cuts=cuts, **options)


@functools.cache
def _client_class() -> type:
    from nbclient import NotebookClient
    from nbformat.v4 import output_from_msg

    class BoundedClient(NotebookClient):
        def __init__(self, nb: Any, cuts: dict[int, CellCuts], **options: Any):
            super().__init__(nb, **options)
            self.cuts = cuts
            self._ends: dict[int, tuple[Any, Ends]] = {}

        def output(
            self, outs: list[Any], msg: dict[str, Any], display_id: str | None, cell_index: int
        ) -> Any:
            if self.output_hook_stack[msg["parent_header"].get("msg_id")]:
                return super().output(outs, msg, display_id, cell_index)
            if self.clear_before_next_output:
                self.clear_before_next_output = False
                outs[:] = []
                self.clear_display_id_mapping(cell_index)
            cuts = self.cuts.setdefault(cell_index, CellCuts())
            content = msg["content"]
            if msg["msg_type"] == "stream" and outs:
                last = outs[-1]
                joined = self._ends.get(id(last))
                if joined and joined[0] is last and last.get("name") == content.get("name"):
                    return self._stream(last, joined[1], content.get("text", ""), cuts)
            if len(outs) < HEAD_OUTPUTS:
                out = super().output(outs, msg, display_id, cell_index)
            else:
                try:
                    out = output_from_msg(msg)
                except ValueError:
                    return None
                outs.append(out)  # past the head: its place moves, so no display id
                if len(outs) > HEAD_OUTPUTS + TAIL_OUTPUTS:
                    self._ends.pop(id(outs.pop(HEAD_OUTPUTS)), None)
                    cuts.dropped += 1
            if out is None:
                return None
            if out.get("output_type") == "stream":
                text, out["text"] = out.get("text", ""), ""
                ends = Ends()
                self._ends[id(out)] = (out, ends)
                return self._stream(out, ends, text, cuts)
            self._shorten(out, cuts)
            return out

        def clear_output(self, outs: list[Any], msg: dict[str, Any], cell_index: int) -> None:
            super().clear_output(outs, msg, cell_index)
            if not outs:
                self._ends.clear()

        def _stream(self, out: Any, ends: Ends, text: str, cuts: CellCuts) -> Any:
            was_cut = ends.cut > 0
            ends.feed(text)
            out["text"] = ends.text()
            if ends.cut:
                name = out.get("name", "stream")
                counted = len(text) if was_cut else ends.total
                cuts.streams[name] = cuts.streams.get(name, 0) + counted
            return out

        def _shorten(self, out: Any, cuts: CellCuts) -> None:
            data = out.get("data") or {}
            for mime, value in list(data.items()):
                if isinstance(value, str):
                    text = value
                elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                    text = "".join(value)
                else:  # JSON data (application/json, widget state): its text size counts
                    text = json.dumps(value, default=str)
                limit = IMAGE_CHARS if mime in IMAGE_TYPES else DATA_CHARS
                if len(text) > limit:
                    data[mime] = text[:limit]
                    out.setdefault("metadata", {}).setdefault("elelem_sizes", {})[mime] = len(text)
                    cuts.data += 1

    return BoundedClient
