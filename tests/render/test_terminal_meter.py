"""The terminal renderer's compaction line and context meter."""

from __future__ import annotations

import io

from elelem_kernel.render.terminal_view import RESET, YELLOW, TerminalRenderer


def test_compaction_lines_and_the_meter_on_a_terminal():
    out, err = io.StringIO(), io.StringIO()
    show = TerminalRenderer(out, err, color=True)
    show({"type": "compaction", "turns": 2, "before": 5_000, "after": 800, "summary": "s"})
    show({"type": "compaction", "turns": 1, "before": 5_000, "after": 4_000, "failed": "boom"})
    show({"type": "status", "state": "waiting", "provider": "echo", "model": None})
    context = {"used": 41_000, "window": 200_000, "estimated": False}
    show({"type": "turn_end", "stop": "end_turn", "usage": {}, "rounds": 1, "context": context})
    lines = err.getvalue().splitlines()
    assert "compacted 2 turns, 5.0k → 800 tokens" in lines[0]
    failed = "could not compact (boom): left out the oldest 1 turn, 5.0k → 4.0k tokens"
    assert f"{YELLOW}{failed}\n{RESET}" in err.getvalue()  # a failure stands out
    assert "ctx 41k/200k" in lines[2]
