"""The block index arithmetic of docs/design.md ("Block layout"), pinned to exact indexes."""

from __future__ import annotations

from elelem_kernel.agent.blocks import BlockLayout


def layout():
    events: list[dict] = []
    return BlockLayout(events.append), events


def starts(events):
    return [(e["index"], e["block"]) for e in events if e["type"] == "block_start"]


def doing(i):
    return {"type": "doing", "id": f"c{i}", "name": "read", "arguments": {"path": str(i)}}


def test_one_tool_call_silent_round():
    lay, events = layout()
    lay.event(doing(0))
    lay.tool_result("c0", True, "{}")
    assert starts(events) == [(0, "tool_use"), (1, "tool_result")]
    assert lay.base == 2


def test_two_parallel_calls_results_after_both_uses():
    lay, events = layout()
    lay.event(doing(0))
    lay.event(doing(1))
    lay.tool_result("c1", True, "b")  # results may come in any order
    lay.tool_result("c0", False, "a")
    assert starts(events) == [
        (0, "tool_use"),
        (1, "tool_use"),
        (3, "tool_result"),
        (2, "tool_result"),
    ]
    result = {e["id"]: e["index"] for e in events if e.get("block") == "tool_result"}
    assert result == {"c0": 2, "c1": 3}
    assert lay.base == 4


def test_thinking_and_text_before_calls_give_a_nonzero_tool_base():
    lay, events = layout()
    lay.event({"type": "thinking", "text": "hmm"})
    lay.event({"type": "saying", "text": "let me check"})
    lay.event(doing(0))
    lay.event(doing(1))
    assert lay.tool_base == 2
    lay.tool_result("c0", True, "x")
    lay.tool_result("c1", True, "y")
    assert starts(events) == [
        (0, "thinking"),
        (1, "text"),
        (2, "tool_use"),
        (3, "tool_use"),
        (4, "tool_result"),
        (5, "tool_result"),
    ]
    assert lay.base == 6


def test_second_round_starts_after_the_first_rounds_results():
    lay, events = layout()
    lay.event({"type": "saying", "text": "a"})
    lay.event(doing(0))
    lay.tool_result("c0", True, "x")
    lay.event({"type": "thinking", "text": "next"})
    lay.event({"type": "saying", "text": "done"})
    lay.close()
    assert starts(events) == [
        (0, "text"),
        (1, "tool_use"),
        (2, "tool_result"),
        (3, "thinking"),
        (4, "text"),
    ]


def test_round_advances_only_on_the_last_result():
    lay, events = layout()
    lay.event(doing(0))
    lay.event(doing(1))
    lay.tool_result("c0", True, "x")
    assert lay.base == 0 and lay.rounds == 0
    lay.tool_result("c1", True, "y")
    assert lay.base == 4 and lay.rounds == 1


def test_thinking_after_text_is_not_shown_and_uses_no_index():
    lay, events = layout()
    lay.event({"type": "saying", "text": "answer "})
    lay.event({"type": "thinking", "text": "late thought"})
    lay.event({"type": "saying", "text": "continues"})
    lay.event(doing(0))
    lay.tool_result("c0", True, "x")
    assert starts(events) == [(0, "text"), (1, "tool_use"), (2, "tool_result")]
    deltas = [e["text"] for e in events if e["type"] == "block_delta"]
    assert deltas == ["answer ", "continues"]


def test_no_empty_thinking_block_and_every_start_stops():
    lay, events = layout()
    lay.event({"type": "thinking", "text": ""})
    lay.event({"type": "saying", "text": "hi"})
    lay.close()
    assert starts(events) == [(0, "text")]
    started = [e["index"] for e in events if e["type"] == "block_start"]
    stopped = [e["index"] for e in events if e["type"] == "block_stop"]
    assert sorted(started) == sorted(stopped)


def test_thinking_closes_before_text_opens():
    lay, events = layout()
    lay.event({"type": "thinking", "text": "t"})
    lay.event({"type": "saying", "text": "s"})
    kinds = [(e["type"], e["index"]) for e in events]
    assert kinds.index(("block_stop", 0)) < kinds.index(("block_start", 1))
