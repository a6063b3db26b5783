"""The turn recorder (agent/record.py): what a turn's events become in its record, and the
same version read back by restore."""

from __future__ import annotations

import json

import pytest

from elelem_kernel.agent import record
from elelem_kernel.agent.record import (
    ARGUMENTS_LIMIT,
    DEPTH_LIMIT,
    TOO_DEEP,
    TurnRecorder,
    deeper_than,
    fit,
)
from elelem_kernel.store import rebuild, record_format
from elelem_kernel.store.rebuild import check
from elelem_kernel.store.record_format import larger_than

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


def test_fit_leaves_a_record_under_the_limit_alone():
    record = {"v": 1, "prompt": "p", "reply": "r", "rounds": [{"text": "r", "calls": []}]}
    assert fit(dict(record), limit=1_000) == record


def test_fit_cuts_long_texts_first():
    record = {"v": 1, "turn": "t" * 40, "prompt": "p" * 500_000, "reply": "r" * 300_000}
    record["rounds"] = [{"thinking": "", "text": "r" * 300_000, "calls": []}]
    fit(record, limit=300_000)
    assert not larger_than(record, 300_000) and record["turn"] == "t" * 40
    assert record["prompt"].startswith("ppp") and "more characters]" in record["prompt"]


def test_fit_keeps_the_reply_alone_when_calls_are_too_many():
    calls = [{"id": f"c{i}", "name": "n", "arguments": {"x": "a" * 900}} for i in range(5000)]
    record = {"v": 1, "prompt": "p", "reply": "the answer", "findings": [{"t": "x"}] * 10}
    record["rounds"] = [{"thinking": "", "text": "", "calls": calls}]
    fit(record, limit=1_000_000)
    assert not larger_than(record, 1_000_000) and "findings" not in record
    [round_] = record["rounds"]
    assert round_["calls"] == [] and round_["text"].startswith("the answer\n\n… [the rounds")
    assert check({**record, "conversation": "c", "turn": "t"}) is None


def test_arguments_past_the_depth_limit_become_a_marker_in_the_record():
    deep: object = "bottom"
    for _ in range(900):
        deep = {"a": deep}
    assert deeper_than(deep) and not deeper_than({"a": {"b": [1]}})
    recorder = TurnRecorder(conversation="c", prompt="p", provider="scripted", model=None)
    recorder.start_round()
    recorder.event({"type": "doing", "id": "c1", "name": "read", "arguments": {"x": deep}})
    recorder.result("c1", {"ok": False, "error": "no", "arguments": {"x": deep}}, 1)
    [call] = recorder.finish("end_turn")["rounds"][0]["calls"]
    assert TOO_DEEP in json.dumps(call["arguments"], ensure_ascii=False)
    assert TOO_DEEP in call["result"]
    assert not deeper_than(call["arguments"], DEPTH_LIMIT)


def test_long_arguments_are_kept_as_cut_text():
    recorder = TurnRecorder(conversation="c", prompt="p", provider="scripted", model=None)
    recorder.start_round()
    many = {f"k{i}": "v" * 5_000 for i in range(20)}
    recorder.event({"type": "doing", "id": "c1", "name": "write", "arguments": many})
    [call] = recorder.finish("end_turn")["rounds"][0]["calls"]
    assert isinstance(call["arguments"], str) and call["arguments"].startswith('{"k0": "vvv')
    assert len(call["arguments"]) < ARGUMENTS_LIMIT + 100


def test_a_turn_that_never_produced_a_record_gets_a_valid_one():
    for interrupted, stop in ((True, "interrupted"), (False, "error")):
        made = record.unfinished(
            conversation="c1",
            prompt="hi",
            provider="demo",
            model=None,
            cell="x",
            interrupted=interrupted,
        )
        assert rebuild.check(made) is None
        assert (made["v"], made["stop"], made["rounds"], made["reply"]) == (
            record.VERSION,
            stop,
            [],
            "",
        )
        assert (made["conversation"], made["cell"], made["prompt"]) == ("c1", "x", "hi")
    assert made["error"] == "the turn did not finish"


def test_the_reader_accepts_exactly_the_version_the_recorder_writes():
    written = record.TurnRecorder(conversation="c", prompt="p", provider="demo", model=None)
    written.start_round()
    done = written.finish("end_turn")
    assert rebuild.check(done) is None
    assert rebuild.check({**done, "v": record_format.NEWEST + 1}).startswith("written by a newer")
