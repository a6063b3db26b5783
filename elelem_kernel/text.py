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
