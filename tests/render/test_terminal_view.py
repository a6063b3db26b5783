"""The terminal renderers: the person's stream and the `--json` lines."""

from __future__ import annotations

import io
import json

from elelem_kernel.render.static import bundle
from elelem_kernel.render.terminal_view import JsonRenderer, TerminalRenderer

END = {
    "type": "turn_end",
    "stop": "end_turn",
    "usage": {"input": 1200, "output": 300},
    "rounds": 1,
    "ms": 1500,
    "cost": 0.0048,
}


def test_json_lines_keep_the_documented_turn_end_keys():
    out = io.StringIO()
    JsonRenderer(out)(END)
    assert json.loads(out.getvalue()) == {
        "type": "turn_end",
        "stop": "end_turn",
        "usage": {"input": 1200, "output": 300},
        "rounds": 1,
        "ms": 1500,
    }


def test_the_terminal_footer_is_the_frozen_outputs_footer():
    out, err = io.StringIO(), io.StringIO()
    view = TerminalRenderer(out, err, color=False)
    view.provider, view.model = "openai", "gpt-4.1"
    view(END)
    record = {**END, "rounds": [{"text": ""}], "provider": "openai", "model": "gpt-4.1"}
    frozen = bundle(record)[0]["text/plain"].splitlines()[-1].removeprefix("-- ")
    assert err.getvalue().strip() == frozen
    assert frozen == "in 1,200 · out 300 · 1.5 s · 1 round · done · openai/gpt-4.1 · $0.0048"
    view({**END, "cost": None})
    assert err.getvalue().strip().endswith("· cost unknown")


HOSTILE = "\x1b]0;TITLE\x07\r\x1b[2J\u202e"
COLOURS = ("\033[2m", "\033[1m", "\033[31m", "\033[32m", "\033[33m", "\033[0m")


def test_notices_and_the_compaction_note_reach_the_terminal_as_visible_text():
    out, err = io.StringIO(), io.StringIO()
    view = TerminalRenderer(out, err, color=True)
    view({"type": "notice", "text": f"MCP server 'x' failed: stderr {HOSTILE}"})
    view({"type": "compaction", "failed": f"HTTP 500: {HOSTILE}", "turns": 2})
    view({"type": "turn_end", "stop": "error", "error": HOSTILE, "rounds": 0})
    written = err.getvalue()
    for code in COLOURS:
        written = written.replace(code, "")
    assert "\x1b" not in written and "\x07" not in written and "\u202e" not in written
    assert "\r" not in written
    assert written.count("\\x1b]0;TITLE\\x07\\r\\x1b[2J\\u202e") == 3


def test_every_event_field_is_visible_whatever_the_event():
    """Each string of each event the renderer draws is hostile; only its own colours pass."""
    out, err = io.StringIO(), io.StringIO()
    view = TerminalRenderer(out, err, color=True)
    view.tty = True
    events = [
        {"type": "status", "provider": HOSTILE, "model": HOSTILE},
        {"type": "block_start", "index": 0, "block": "thinking"},
        {"type": "block_delta", "index": 0, "text": HOSTILE},
        {"type": "block_stop", "index": 0},
        {"type": "block_start", "index": 1, "block": "text"},
        {"type": "block_delta", "index": 1, "text": HOSTILE},
        {"type": "block_start", "index": 2, "block": "tool_use", "id": HOSTILE, "name": HOSTILE},
        {"type": "block_start", "index": 3, "block": "tool_result", "id": HOSTILE, "ok": True},
        {"type": "block_stop", "index": 1},
        {"type": "tool_state", "state": "declined"},
        {"type": "notice", "text": HOSTILE},
        {"type": "compaction", "failed": HOSTILE},
        {"type": "turn_end", "stop": "max_tokens", "error": HOSTILE, "rounds": 1, "usage": {}},
    ]
    for event in events:
        view(event)
    written = out.getvalue() + err.getvalue()
    for code in COLOURS:
        written = written.replace(code, "")
    assert all(ch in "\n" or ch.isprintable() for ch in written)
