"""The terminal renderers: the person's stream and the `--json` lines."""

from __future__ import annotations

import io
import json

from elelem_kernel.render.static import bundle
from elelem_kernel.render.terminal import JsonRenderer, TerminalRenderer

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
    assert frozen == "in 1,200 · out 300 · 1.5 s · 1 round · end_turn · openai/gpt-4.1 · $0.0048"
    view({**END, "cost": None})
    assert err.getvalue().strip().endswith("· cost unknown")
