"""`visible`: what model and tool text may put on a terminal, and the JSON-lines form."""

from __future__ import annotations

import io
import json

import pytest

from elelem_kernel.render.terminal_view import JsonRenderer, TerminalRenderer
from elelem_kernel.visible import json_visible, visible, visible_json


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("\x1b]52;c;QQ==\x07", "\\x1b]52;c;QQ==\\x07"),
        ("a\rb", "a\\rb"),
        ("\x00\x08\x7f", "\\x00\\x08\\x7f"),
        ("\x9b31m\x85", "\\x9b31m\\x85"),  # C1: CSI and NEL
        ("\u202eexe.txt\u202c", "\\u202eexe.txt\\u202c"),
        ("\u2066x\u2069", "\\u2066x\\u2069"),
        ("\u2028", "\\u2028"),  # a line separator some terminals obey
        ("\U000e0041", "\\U000e0041"),  # a tag character: invisible text
    ],
)
def test_characters_a_terminal_obeys_are_written_as_escapes(text: str, shown: str) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize(
    "text",
    ["plain", "tab\tand\nnewline", "é ü 漢字 \u00a0 \u3000", "👨\u200d👩\u200d👧 family"],
)
def test_printable_text_newlines_tabs_and_joiners_pass(text: str) -> None:
    assert visible(text) == text


def test_lines_of_printable_text_come_back_as_they_are() -> None:
    """The common case (a reply of many lines, frozen into a cell's text/plain) is one pass
    in C, not a look at each character: the same string comes back."""
    reply = "\n".join(f"line {i}\twith words é 漢" for i in range(2000))
    assert visible(reply) is reply
    assert visible(reply + "\n\x1b[2J") == reply + "\n\\x1b[2J"


def test_a_windows_line_ending_is_a_newline() -> None:
    assert visible("one\r\ntwo\r") == "one\ntwo\\r"


def test_json_lines_escape_the_same_characters_and_read_back_the_same() -> None:
    value = {"text": "\x1b]8;;x\x1b\\ \u202e \x9b \U000e0041 é 漢 👍", "n": 1}
    line = visible_json(value)
    assert line.isprintable() and json.loads(line) == value
    assert "é 漢 👍" in line  # readable text stays readable


def test_the_terminal_renderer_writes_no_escape_from_events() -> None:
    out, err = io.StringIO(), io.StringIO()
    render = TerminalRenderer(out, err, color=False)
    hostile = "\x1b]0;title\x07\u202e"
    events = [
        {"type": "block_start", "index": 0, "block": "thinking"},
        {"type": "block_delta", "index": 0, "text": hostile},
        {"type": "block_stop", "index": 0},
        {"type": "block_start", "index": 1, "block": "text"},
        {"type": "block_delta", "index": 1, "text": hostile},
        {"type": "block_stop", "index": 1},
        {
            "type": "block_start",
            "index": 2,
            "block": "tool_use",
            "id": "t",
            "name": hostile,
            "arguments": {"a": hostile},
        },
        {
            "type": "block_start",
            "index": 3,
            "block": "tool_result",
            "id": "t",
            "ok": False,
            "content": json.dumps({"error": hostile}, ensure_ascii=False),
        },
        {"type": "turn_end", "stop": "error", "error": hostile, "rounds": 1, "usage": {}},
    ]
    for event in events:
        render(event)
    written = out.getvalue() + err.getvalue()
    assert "\x1b" not in written and "\u202e" not in written and "\x07" not in written
    # reply, thinking, the tool's name twice and the error; arguments and result as JSON
    assert written.count("\\x1b]0;title\\x07\\u202e") == 5
    assert written.count("\\u001b]0;title\\u0007\\u202e") == 2


def test_the_json_renderer_writes_one_printable_object_a_line() -> None:
    out = io.StringIO()
    event = {"type": "block_delta", "index": 0, "text": "\x1b[2J\u202e\x85"}
    JsonRenderer(out)(event)
    line = out.getvalue()
    assert line.endswith("\n") and line.count("\n") == 1 and line[:-1].isprintable()
    assert json.loads(line) == event


def test_json_text_keeps_its_layout_and_reads_back_the_same() -> None:
    value = {"findings": [{"title": "\u202eevil\x9b", "body": "ok\nline"}]}
    text = json.dumps(value, indent=2, ensure_ascii=False)
    shown = json_visible(text)
    assert json.loads(shown) == value and "\u202e" not in shown and "\x9b" not in shown
    assert shown.count("\n") == text.count("\n")
