"""Bounded text: one way to cut a long text and say how much was left out.

Content (a tool result, a diff, a preview) is cut with one marker, `[... N more characters]`
(or lines), so a model and a person both see that and how much is missing. A one-line label
(a title, an argument summary) ends in `…` instead: it only has to fit its line.
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
