"""Markdown as readable terminal text, for text clients (jupyter console, qtconsole).

A reply is Markdown; a console shows characters, so `**`, backticks and table pipes would
show as typed. `to_text` renders it with mistune's parser: emphasis and code spans lose
their markers, links show their target, lists keep their bullets, code blocks are
indented, tables become aligned columns. `MarkdownStream` does that while a reply streams:
it writes each finished line (a table once it ends, since its columns need every row),
and at most every `interval` seconds pushes the stream on, so a client gets a few
messages a second rather than one per token. Control characters are the caller's to
neutralise (`visible`).
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import IO, TYPE_CHECKING, TypedDict, cast

if TYPE_CHECKING:
    from mistune import Markdown

#: Seconds between pushes of a streamed reply: the live view's refresh rate (widget.py).
INTERVAL = 0.08
#: A line without its end yet is written in pieces once it is this long (a paragraph a
#: model streams as one line), cut at a space where no emphasis or code span is open.
LONG_LINE = 80
#: What is held back at most (bounded memory): a line with no place to cut goes out as
#: it is past this many characters, a table in parts of this many rows.
HELD_CHARS, HELD_ROWS = 4000, 200
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Attrs(TypedDict, total=False):
    """The `attrs` of a mistune token that this module reads."""

    url: str
    level: int
    start: int
    ordered: bool
    align: str | None


class Token(TypedDict, total=False):
    """A node of mistune's syntax tree (its AST renderer's output)."""

    type: str
    raw: str
    children: list[Token]
    attrs: Attrs


@lru_cache(maxsize=1)
def _parser() -> Markdown:
    import mistune  # lazy: only text clients render Markdown as text

    return mistune.create_markdown(renderer=None, plugins=["strikethrough", "table"])


def _tokens(markdown: str) -> list[Token]:
    """The syntax tree of `markdown` (the parser has no renderer: it returns its tokens)."""
    tree = _parser()(markdown)
    return [cast(Token, token) for token in tree] if isinstance(tree, list) else []


def to_text(markdown: str) -> str:
    """`markdown` as terminal text (no trailing newline)."""
    tokens = _tokens(markdown)
    return "\n\n".join(b for b in (_block(t) for t in tokens) if b).rstrip("\n")


def _inline(tokens: list[Token] | None) -> str:
    parts = []
    for token in tokens or []:
        kind = token.get("type")
        if kind in ("text", "codespan", "inline_html", "block_html"):
            parts.append(token.get("raw", ""))
        elif kind in ("linebreak", "softbreak"):  # a line ends where the writer ended it
            parts.append("\n")
        elif kind == "link":
            label, url = _inline(token.get("children")), token.get("attrs", {}).get("url", "")
            parts.append(label if url in (label, f"mailto:{label}") else f"{label} ({url})")
        elif kind == "image":
            parts.append(f"[image: {_inline(token.get('children'))}]")
        else:  # strong, emphasis, strikethrough: their text, without the markers
            parts.append(_inline(token.get("children")) or token.get("raw", ""))
    return "".join(parts)


def _block(token: Token, depth: int = 0) -> str:
    kind = token.get("type")
    children = token.get("children") or []
    if kind in ("paragraph", "block_text"):
        return _inline(children)
    if kind == "heading":
        title = _inline(children)
        level = token.get("attrs", {}).get("level", 1)
        return f"{title}\n{('=' if level == 1 else '-') * len(title)}" if level <= 2 else title
    if kind == "block_code":
        return "\n".join("    " + line for line in token.get("raw", "").rstrip("\n").split("\n"))
    if kind == "block_quote":
        inner = "\n\n".join(_block(t) for t in children if _block(t))
        return "\n".join("> " + line if line else ">" for line in inner.split("\n"))
    if kind == "list":
        return _list(token, depth)
    if kind == "table":
        return _table(token)
    if kind == "thematic_break":
        return "-" * 20
    if kind == "block_html":
        return str(token.get("raw", "")).rstrip("\n")
    return ""


def _list(token: Token, depth: int) -> str:
    attrs = token.get("attrs", {})
    number = attrs.get("start") or 1
    lines = []
    for i, item in enumerate(token.get("children") or []):
        bullet = f"{number + i}." if attrs.get("ordered") else "-"
        blocks = [
            _list(t, depth + 1) if t.get("type") == "list" else _block(t, depth)
            for t in item.get("children") or []
        ]
        text = "\n".join(b for b in blocks if b)
        pad = " " * (len(bullet) + 1)
        first, *rest = text.split("\n") or [""]
        lines.append(f"{bullet} {first}")
        lines.extend(pad + line if line else "" for line in rest)
    return "\n".join(lines)


def _table(token: Token) -> str:
    rows: list[list[str]] = []
    aligns: list[str | None] = []
    for part in token.get("children") or []:
        found: list[Token] = part.get("children") or []
        if part.get("type") == "table_head":
            found = [{"children": found}]
        for row in found:
            cells = row.get("children") or []
            rows.append([_inline(c.get("children")).replace("\n", " ") for c in cells])
            if not aligns:
                aligns = [c.get("attrs", {}).get("align") for c in cells]
    if not rows:
        return ""
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(len(aligns))]

    def line(row: list[str]) -> str:
        cells = []
        for i, width in enumerate(widths):
            cell = row[i] if i < len(row) else ""
            cells.append(cell.rjust(width) if aligns[i] == "right" else cell.ljust(width))
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


class MarkdownStream:
    """Streamed Markdown in, terminal text out to `out`, a finished line at a time.

    `write` takes pieces of the reply; `finish` writes what is left (the reply or its
    block ended). A table, or a list or quote whose lines belong together, is held until
    a line that is not part of it; a code fence's lines go out as they come.
    """

    def __init__(self, out: IO[str], interval: float = INTERVAL):
        self.out = out
        self.interval = interval
        self.pending = ""  #: the unfinished line
        self.midline = False  #: part of the unfinished line was written already
        self.table: list[str] = []  #: lines of a table being received
        self.head: list[str] = []  #: its header lines, once a part of it went out
        self.fence = ""  #: the marker of the open code fence, if any
        self.pushed = 0.0

    def write(self, text: str) -> None:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self._line(line)
        if len(self.pending) >= LONG_LINE and not self.fence and not self.table:
            self._piece()
        if len(self.pending) > HELD_CHARS:
            self.out.write(self.pending)
            self.pending, self.midline = "", True
        self._push()

    def finish(self) -> None:
        """Write what is held: the unfinished line and a table (the block ended)."""
        if self.pending:
            self._line(self.pending)
            self.pending = ""
        self._end_table()
        self.fence = ""
        self.out.flush()
        self.pushed = time.monotonic()

    def _piece(self) -> None:
        """Write the unfinished line up to a space where no marker is left open."""
        head = self.pending.lstrip() if not self.midline else self.pending
        if not self.midline and head.startswith(("|", "#", "<")):
            return  # a table row, a heading or HTML: rendered whole
        cut = self.pending.rfind(" ")
        while cut > 0:
            part = self.pending[:cut]
            if (
                part.count("`") % 2 == 0
                and part.count("**") % 2 == 0
                and part.count("[") == part.count("]")
            ):
                break
            cut = self.pending.rfind(" ", 0, cut)
        if cut <= 0:
            return
        part, self.pending = self.pending[:cut], self.pending[cut:]
        self.out.write(self._render(part))
        self.midline = True

    def _render(self, part: str) -> str:
        """`part` of a line as text; a later part of a line starts no block (`1.`, `-`)."""
        if not self.midline:
            indent = part[: len(part) - len(part.lstrip())]  # a nested list item stays nested
            return indent + to_text(part.lstrip())
        leading = " " if part.startswith(" ") else ""
        return leading + to_text("x" + part.lstrip())[1:]

    def _line(self, line: str) -> None:
        if self.midline:  # the end of a line written in pieces
            self.out.write((self._render(line) if line.strip() else "") + "\n")
            self.midline = False
            return
        match = _FENCE.match(line)
        if self.fence:
            if match and match.group(1)[0] == self.fence[0] and not line.strip(" `~"):
                self.fence = ""
            else:
                self.out.write("    " + line + "\n")
            return
        if line.lstrip().startswith("|"):
            self.table.append(line)
            if len(self.table) >= HELD_ROWS:
                self._end_table(more=True)
            return
        self._end_table()
        if match:
            self.fence = match.group(1)
            return
        self.out.write((self._render(line) if line.strip() else "") + "\n")

    def _end_table(self, more: bool = False) -> None:
        """Write the table held so far; `more`: rows follow (each part repeats the header)."""
        if self.table:
            rows = self.head + self.table
            if more and not self.head:
                self.head = self.table[:2]
            self.table = []
            self.out.write(to_text("\n".join(rows)) + "\n")
        if not more:
            self.head = []

    def _push(self) -> None:
        now = time.monotonic()
        if now - self.pushed >= self.interval:
            self.pushed = now
            self.out.flush()
