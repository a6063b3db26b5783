"""The turn recorder (agent/record.py): what a turn's events become in its record."""

from __future__ import annotations

import pytest

from elelem_kernel.agent.record import TurnRecorder

#: A 1.6 MB reply in 4-character deltas: joining with `+=` on a string kept in a dict copies
#: the whole text for every delta (minutes); appending parts and joining once takes a second.
PIECES = [f"{i % 10_000:04d}" for i in range(400_000)]


@pytest.mark.timeout(30)  # joined once: seconds; quadratic: a minute or more
def test_a_long_reply_in_small_deltas_is_recorded_whole():
    recorder = TurnRecorder(conversation="c", prompt="p", provider="scripted", model=None)
    recorder.start_round()
    for piece in PIECES:
        recorder.event({"type": "thinking", "text": piece})
        recorder.event({"type": "saying", "text": piece})
    record = recorder.finish("end_turn")
    whole = "".join(PIECES)
    assert record["rounds"][0]["text"] == whole == record["reply"]
    assert record["rounds"][0]["thinking"] == whole


def test_each_round_keeps_its_own_text():
    recorder = TurnRecorder(conversation="c", prompt="p", provider="scripted", model=None)
    recorder.start_round()
    recorder.event({"type": "saying", "text": "one "})
    recorder.event({"type": "saying", "text": "two"})
    recorder.event({"type": "doing", "id": "c1", "name": "read", "arguments": {}})
    recorder.start_round()
    recorder.event({"type": "thinking", "text": "hm"})
    recorder.event({"type": "saying", "text": "three"})
    record = recorder.finish("end_turn")
    texts = [(r["thinking"], r["text"]) for r in record["rounds"]]
    assert texts == [("", "one two"), ("hm", "three")] and record["reply"] == "three"
