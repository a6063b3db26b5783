"""Model and tool text made safe for a terminal: control characters shown, not obeyed.

Everything the package prints to a terminal from a model, a tool, a provider or a file
passes through `visible`. A terminal obeys the bytes it is sent: ESC starts sequences
that clear the screen, set the title, write the clipboard (OSC 52) or make links (OSC 8);
a bare carriage return or a bidi override redraws or reorders what a person reads, so an
approval preview could show `$ ls -la` while `touch ...` runs.

The rule is an allowlist: newline, tab and printable characters (`str.isprintable`, plus
spaces and the zero-width joiners that emoji and some scripts need) pass; every other
character is written as its Python escape (`\\x1b`, `\\r`, `\\u202e`), so a person sees
that it was there. A carriage return right before a newline is a Windows line ending and
is kept as a plain newline.
"""

from __future__ import annotations

import unicodedata

#: Kept although `str.isprintable` says no: the joiners emoji sequences and scripts use.
_JOINERS = frozenset("\u200c\u200d")
_NAMED = {"\r": "\\r"}


def visible(text: str) -> str:
    """`text` with every character a terminal would obey written as a visible escape."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text  # the common case, lines of printable text: nothing to look at twice
    text = text.replace("\r\n", "\n")
    return "".join(ch if _kept(ch) else _escape(ch) for ch in text)


def _kept(ch: str) -> bool:
    return ch in "\n\t" or ch.isprintable() or ch in _JOINERS or unicodedata.category(ch) == "Zs"


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible_json(value: object) -> str:
    """`value` as one line of JSON that a terminal can show as is (see `json_visible`)."""
    import json

    return json_visible(json.dumps(value, ensure_ascii=False))


def json_visible(text: str) -> str:
    """JSON `text` with the characters `visible` escapes written as `\\uXXXX`.

    `json.dumps` escapes only the C0 controls; the others (DEL, C1, bidi overrides...) can
    only occur inside strings, where a `\\u` escape reads back as the same character.
    """
    if text.isprintable():
        return text
    return "".join(ch if _kept(ch) else _json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
