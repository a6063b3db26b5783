"""Truncation: the one home of cutting a long text and saying how much was left out.

Content (a tool result, a diff, a preview) is cut with one marker, `[... N more characters]`
(or lines), so a model and a person both see that and how much is missing; content kept at
both ends says `[... N characters cut from the middle of T ...]` (or bytes) between them,
and a file line too long to show `[... line cut: N bytes in all]`. A one-line label (a
title, an argument summary, an error's reason) ends in `…` instead: it only has to fit
its line. A result that holds only part of what was asked for says so in one sentence,
`showing 300 of 500 names; <how to ask for less or for the rest>` (`showing`), and a size
in bytes reads one way everywhere, `12.3 KB` (`human_size`). Every layer imports these from here.
"""

from __future__ import annotations

from collections import deque
from typing import Generic, Literal, TypeVar

#: What a stream is made of: characters (`str`) or bytes.
S = TypeVar("S", str, bytes)

#: How `human_size` writes a figure: "exact" 20.0 MB (a file, an output), "limit" 1 MB as set (a
#: bound), "rough" never under 1 KB, whole KB below 1 MB (a picture at a glance).
SizeStyle = Literal["exact", "limit", "rough"]
_UNITS = (("GB", 1e9), ("MB", 1e6), ("KB", 1e3))


def more(count: int, unit: str = "characters") -> str:
    """The cut marker: `[... 1234 more characters]`."""
    return f"[... {count} more {unit}]"


def clip(text: str, limit: int, sep: str = " ") -> str:
    """`text` cut to `limit` characters, then `sep` and the marker; unchanged if it fits."""
    if len(text) <= limit:
        return text
    return text[:limit] + sep + more(len(text) - limit)


def middle(cut: int, total: int, unit: str = "characters") -> str:
    """The marker between kept ends: `[... 8 characters cut from the middle of 17 ...]`."""
    return f"[... {cut} {unit} cut from the middle of {total} ...]"


def ends(head: str, tail: str, cut: int, total: int, unit: str = "characters") -> str:
    """`head` and `tail` of a text of `total` units, with the middle marker between them."""
    if not cut:
        return head + tail
    return f"{head}\n{middle(cut, total, unit)}\n{tail}"


def clip_middle(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, two thirds from its start and the rest from its end."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = text[len(text) - (limit - head) :]
    return ends(text[:head], tail, len(text) - limit, len(text))


class HeadTail(Generic[S]):
    """The first `head` and last `tail` characters (or bytes) of a stream fed piece by piece,
    and how many came in all: memory stays bounded however long the stream runs.

    `empty` says which: `""` for text, `b""` for bytes (decoded as UTF-8 by `text()`).
    """

    def __init__(self, head: int, tail: int, empty: S):
        self.head_limit, self.tail_limit = head, tail
        self.empty: S = empty
        self.head: S = empty
        self._tail: deque[S] = deque()
        self._tail_size = 0
        self.total = 0

    def feed(self, piece: S) -> None:
        """Take the next piece of the stream."""
        self.total += len(piece)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += piece[:room]
            piece = piece[room:]
        if not piece or self.tail_limit <= 0:
            return
        self._tail.append(piece)
        self._tail_size += len(piece)
        while self._tail_size - len(self._tail[0]) >= self.tail_limit:
            self._tail_size -= len(self._tail.popleft())

    @property
    def tail(self) -> S:
        """The last `tail_limit` units fed after the head was full."""
        if not self._tail:
            return self.empty
        return self.empty.join(self._tail)[-self.tail_limit :]

    @property
    def cut(self) -> int:
        """How many units in the middle were dropped."""
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """What was kept, with the middle marker where something was cut."""
        head, tail = self.head, self.tail
        if isinstance(head, str) and isinstance(tail, str):
            return ends(head, tail, self.cut, self.total)
        assert isinstance(head, bytes) and isinstance(tail, bytes)
        if not self.cut:  # decoded whole: a character split between head and tail stays one
            return (head + tail).decode("utf-8", errors="replace")
        kept = head.decode("utf-8", errors="replace"), tail.decode("utf-8", errors="replace")
        return ends(*kept, self.cut, self.total, "bytes")


def line_cut(total: int, unit: str = "bytes") -> str:
    """The marker after the shown part of a file's overlong line: its whole length."""
    return f"[... line cut: {total} {unit} in all]"


def shorten(text: str, limit: int) -> str:
    """A one-line label of at most `limit` characters, ending in `…` when it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip_lines(text: str, max_lines: int, max_chars: int) -> list[str]:
    """The lines of `text` within both bounds, then one saying how much was left out.

    What an approval question shows of a preview, at a terminal and in a notebook alike.
    """
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    shown: list[str] = []
    budget = max_chars
    for line in lines[:max_lines]:
        if budget <= 0:
            break
        if len(line) > budget:
            shown.append(line[:budget] + more(len(line) - budget))
            break
        shown.append(line)
        budget -= len(line) + 1
    left = len(lines) - len(shown)
    if left > 0:
        shown.append(more(left, "line" if left == 1 else "lines"))
    return shown


def showing(shown: int | str, total: int | str, what: str, then: str) -> str:
    """The sentence of a result cut short: `showing 300 of 500 names; then`, where `then`
    says how to narrow the request or ask for the rest. `what` may be empty ("lines 1-9")."""
    return f"showing {shown} of {total}{' ' + what if what else ''}; {then}"


def human_size(n: int, style: SizeStyle = "exact") -> str:
    """`n` bytes for people, in decimal units: 512 B, 12.3 KB, 20.0 MB, 3.0 GB (`SizeStyle`)."""
    if style == "rough" and n < 1_000_000:
        return f"{max(1, round(n / 1000))} KB"
    for unit, scale in _UNITS:
        if n >= scale:
            figure = f"{n / scale:g}" if style == "limit" else f"{n / scale:.1f}"
            return f"{figure} {unit}"
    return f"{n} B"
