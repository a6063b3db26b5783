"""How tool results stay small: the bounds, a bounded stream sink, sizes and diffs.

The cutting and its markers are `elelem_kernel.text`'s.
"""

from __future__ import annotations

from collections import deque

from elelem_kernel.text import clip, ends

#: Result bounds: roughly what fits a model's context without crowding it.
MAX_BYTES = 50_000
MAX_LINES = 2_000


def human_size(n: int) -> str:
    """`n` bytes as a short figure: 512 B, 12.3 KB, 20.0 MB."""
    if n < 1000:
        return f"{n} B"
    for unit, scale in (("KB", 1e3), ("MB", 1e6)):
        if n < scale * 1000:
            return f"{n / scale:.1f} {unit}"
    return f"{n / 1e9:.1f} GB"


class HeadTail:
    """A bounded byte sink keeping the first and last `limit / 2` bytes of a stream."""

    def __init__(self, limit: int = MAX_BYTES):
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self.lines = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of the stream."""
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.tail_size -= len(self.tail.popleft())

    @property
    def cut(self) -> int:
        """How many bytes in the middle were dropped."""
        return max(0, self.total - len(self.head) - min(self.tail_size, self.tail_limit))

    def text(self) -> str:
        """What was kept, decoded, with a marker saying how much is missing in the middle."""
        tail = b"".join(self.tail)[-self.tail_limit :] if self.tail else b""
        if not self.cut:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        head = self.head.decode("utf-8", errors="replace")
        return ends(head, tail.decode("utf-8", errors="replace"), self.cut, self.total, "bytes")


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
