"""How tool results stay small: the bounds and diffs.

The cutting, its markers, sizes in words and the bounded stream sink (`HeadTail`) are
`elelem_kernel.text`'s.
"""

from __future__ import annotations

from elelem_kernel.text import clip

#: Result bounds: roughly what fits a model's context without crowding it.
MAX_BYTES = 50_000
MAX_LINES = 2_000


def unified_diff(before: str, after: str, name: str, limit: int = MAX_BYTES) -> str:
    """A unified diff of two texts of file `name`, cut at `limit` characters."""
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}" if before else "/dev/null",
        tofile=f"b/{name}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text if len(text) <= limit else clip(text, limit, "\n") + "\n"
