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
from typing import TYPE_CHECKING, Any

from elelem_kernel.text import HeadTail
from elelem_kernel.tools.notebook_disk import IMAGE_TYPES, OUTPUT_CHARS

if TYPE_CHECKING:
    from nbformat import NotebookNode

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


def bounded_client(nb: NotebookNode, cuts: dict[int, CellCuts], **options: Any) -> Any:
    """A `NotebookClient` for `nb` that bounds outputs as they come, noting cuts in `cuts`."""
    return _client_class()(nb, cuts=cuts, **options)


@functools.cache
def _client_class() -> type:
    from nbclient import NotebookClient

    class BoundedClient(NotebookClient):
        def __init__(self, nb: NotebookNode, cuts: dict[int, CellCuts], **options: Any):
            super().__init__(nb, **options)
            self.cuts = cuts
            self._ends: dict[int, tuple[NotebookNode, HeadTail[str]]] = {}

        def output(
            self,
            outs: list[NotebookNode],
            msg: dict[str, Any],
            display_id: str | None,
            cell_index: int,
        ) -> Any:
            if self.output_hook_stack[msg["parent_header"].get("msg_id")]:
                return super().output(outs, msg, display_id, cell_index)
            if self.clear_before_next_output:
                self.clear_before_next_output = False
                outs[:] = []
                self.clear_display_id_mapping(cell_index)
            cuts = self.cuts.setdefault(cell_index, CellCuts())
            joined = _continued_stream(self._ends, outs, msg)
            if joined is not None:
                return _stream(*joined, msg["content"].get("text", ""), cuts)
            if len(outs) < HEAD_OUTPUTS:
                out = super().output(outs, msg, display_id, cell_index)
            else:
                out = _past_head(self._ends, outs, msg, cuts)
            if out is None:
                return None
            if out.get("output_type") == "stream":
                text, out["text"] = out.get("text", ""), ""
                ends = HeadTail(STREAM_HEAD, STREAM_TAIL, "")
                self._ends[id(out)] = (out, ends)
                return _stream(out, ends, text, cuts)
            shorten(out, cuts)
            return out

        def clear_output(
            self, outs: list[NotebookNode], msg: dict[str, Any], cell_index: int
        ) -> None:
            super().clear_output(outs, msg, cell_index)
            if not outs:
                self._ends.clear()

    return BoundedClient


def _continued_stream(
    streams: dict[int, tuple[NotebookNode, HeadTail[str]]],
    outs: list[NotebookNode],
    msg: dict[str, Any],
) -> tuple[NotebookNode, HeadTail[str]] | None:
    """The stream output that `msg` goes on with (the cell's last output, of the same
    stream) and its ends, or None."""
    if msg["msg_type"] != "stream" or not outs:
        return None
    last = outs[-1]
    joined = streams.get(id(last))
    if joined and joined[0] is last and last.get("name") == msg["content"].get("name"):
        return joined
    return None


def _past_head(
    streams: dict[int, tuple[NotebookNode, HeadTail[str]]],
    outs: list[NotebookNode],
    msg: dict[str, Any],
    cuts: CellCuts,
) -> Any:
    """Append the output of `msg` after the first `HEAD_OUTPUTS`, dropping the oldest of
    those after them once more than `TAIL_OUTPUTS` follow; the output, or None."""
    from nbformat.v4 import output_from_msg

    try:
        out = output_from_msg(msg)
    except ValueError:
        return None
    outs.append(out)  # past the head: its place moves, so no display id
    if len(outs) > HEAD_OUTPUTS + TAIL_OUTPUTS:
        streams.pop(id(outs.pop(HEAD_OUTPUTS)), None)
        cuts.dropped += 1
    return out


def _stream(out: NotebookNode, ends: HeadTail[str], text: str, cuts: CellCuts) -> NotebookNode:
    """Feed `text` to a stream output's ends, noting what is cut."""
    was_cut = ends.cut > 0
    ends.feed(text)
    out["text"] = ends.text()
    if ends.cut:
        name = out.get("name", "stream")
        counted = len(text) if was_cut else ends.total
        cuts.streams[name] = cuts.streams.get(name, 0) + counted
    return out


def shorten(out: dict[str, object], cuts: CellCuts) -> None:
    """Cut an output's data values to `DATA_CHARS` (images to `IMAGE_CHARS`), noting their
    full size in its metadata (an nbformat output node or its plain dict)."""
    data = out.get("data")
    if not isinstance(data, dict):
        return
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
            metadata = out.setdefault("metadata", {})
            if isinstance(metadata, dict):
                metadata.setdefault("elelem_sizes", {})[mime] = len(text)
            cuts.data += 1
