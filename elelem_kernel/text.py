"""Truncation: the one home of cutting a long text and saying how much was left out.

Content (a tool result, a diff, a preview) is cut with one marker, `[... N more characters]`
(or lines), so a model and a person both see that and how much is missing; content kept at
both ends says `[... N characters cut from the middle of T ...]` (or bytes) between them,
and a file line too long to show `[... line cut: N bytes in all]`. A one-line label (a
title, an argument summary, an error's reason) ends in `…` instead: it only has to fit
its line. Every layer imports these from here.
"""

from __future__ import annotations


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
