"""Turn records for tests: a small valid one (store/record.schema.json) to vary."""

from __future__ import annotations

from typing import Any


def record(turn: str, conversation: str = "c1", **fields: Any) -> dict:
    """The record of echo turn `turn` ("question t1", "answer t1"); `fields` replace keys."""
    return {
        "v": 1,
        "conversation": conversation,
        "turn": turn,
        "cell": None,
        "provider": "echo",
        "model": None,
        "prompt": f"question {turn}",
        "reply": f"answer {turn}",
        "rounds": [{"thinking": "", "text": f"answer {turn}", "calls": []}],
        "usage": {"input": 3, "output": 2},
        "stop": "end_turn",
        "started": "2026-11-29T19:00:00+00:00",
        "ms": 5,
        **fields,
    }
