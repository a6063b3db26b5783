from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from elelem_kernel.store.rebuild import MAX_RECORD_BYTES, check, rebuild
from tests import records


def record(turn: str, conversation: str = "c1", **extra) -> dict:
    """A demo turn that read a file."""
    call = {
        "id": "t1",
        "name": "read",
        "arguments": {"path": "a.txt"},
        "result": '{"ok": true}',
        "ok": True,
        "ms": 3,
    }
    demo = {
        "provider": "demo",
        "model": "demo-1",
        "rounds": [{"thinking": "hm", "text": f"answer {turn}", "calls": [call]}],
        "usage": {"input": 10, "output": 5},
        "started": "2026-11-29T19:00:00Z",
        "ms": 120,
    }
    return records.record(turn, conversation, **{**demo, **extra})


def test_schema_file_is_a_valid_2020_12_schema():
    text = resources.files("elelem_kernel.store").joinpath("record.schema.json").read_text()
    jsonschema.Draft202012Validator.check_schema(json.loads(text))


def test_turns_come_back_in_cell_order_with_the_cell_ids():
    cells = [("a", [record("t1")]), ("b", []), ("c", [record("t2")])]
    rebuilt = rebuild(cells)
    assert [r["turn"] for r in rebuilt.conversations["c1"]] == ["t1", "t2"]
    assert [r["cell"] for r in rebuilt.conversations["c1"]] == ["a", "c"]
    assert rebuilt.active == "c1"
    assert rebuilt.turns == 2
    assert rebuilt.warnings == []


def test_the_last_valid_record_of_a_cell_wins():
    cells = [("a", [record("old"), record("new"), {"v": 3}])]
    rebuilt = rebuild(cells)
    assert [r["turn"] for r in rebuilt.conversations["c1"]] == ["new"]
    assert len(rebuilt.warnings) == 1 and "newer elelem-kernel (v3" in rebuilt.warnings[0]


def test_conversations_keep_start_order_and_the_bottom_one_is_active():
    cells = [
        ("a", [record("t1", "first")]),
        ("b", [record("t2", "second")]),
        ("c", [record("t3", "first")]),
    ]
    rebuilt = rebuild(cells)
    assert list(rebuilt.conversations) == ["first", "second"]
    assert [r["turn"] for r in rebuilt.conversations["first"]] == ["t1", "t3"]
    assert rebuilt.active == "first"


def test_nothing_to_restore():
    rebuilt = rebuild([("a", []), (None, [])])
    assert rebuilt.conversations == {} and rebuilt.active is None and rebuilt.warnings == []


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ({"v": 3, "conversation": "c", "turn": "t"}, "newer elelem-kernel (v3"),
        ({"v": "1"}, "unknown record version '1'"),
        ({"v": True}, "unknown record version True"),
        ("a string", "not an elelem record"),
        ({"tool": "someone else"}, "not an elelem record"),
        (record("x", prompt=42), "prompt"),
        (record("x", rounds="no"), "rounds"),
        (record("x", usage={"input": "many"}), "usage/input"),
        ({k: v for k, v in record("x").items() if k != "turn"}, "'turn' is a required"),
    ],
)
def test_bad_records_are_skipped_with_one_warning(bad, reason):
    rebuilt = rebuild([("a", [record("t1")]), ("b", [bad]), ("c", [record("t2")])])
    assert [r["turn"] for r in rebuilt.conversations["c1"]] == ["t1", "t2"]
    assert len(rebuilt.warnings) == 1
    assert "cell 2" in rebuilt.warnings[0] and reason in rebuilt.warnings[0]


def test_many_bad_records_make_one_summarised_warning():
    cells = [(str(i), [{"v": 9}]) for i in range(10)] + [("ok", [record("t1")])]
    rebuilt = rebuild(cells)
    assert rebuilt.turns == 1
    assert len(rebuilt.warnings) == 1
    assert (
        rebuilt.warnings[0].startswith("skipped 10 records") and "and 7 more" in rebuilt.warnings[0]
    )


def test_a_record_over_the_size_bound_is_skipped():
    huge = record("big", reply="x" * (MAX_RECORD_BYTES + 1))
    assert "too large" in check(huge)
    nested = record("deep", rounds=[{"text": "y" * 1000, "calls": []}] * 5000)
    assert "too large" in check(nested)
    rebuilt = rebuild([("a", [huge]), ("b", [record("t1")])])
    assert rebuilt.turns == 1 and "too large" in rebuilt.warnings[0]


def test_a_long_agentic_turn_fits_the_bound():
    call = {"id": "c", "name": "read", "arguments": {"path": "a"}, "result": "r" * 8100, "ok": True}
    rounds = [{"thinking": "t" * 2000, "text": "x" * 500, "calls": [call] * 8}] * 25
    assert check(record("long", rounds=rounds)) is None


def test_two_cells_claiming_one_turn_keep_the_later_cell():
    first, copy = record("t1", prompt="original"), record("t1", prompt="copy")
    rebuilt = rebuild([("a", [first]), ("b", [record("t2")]), ("c", [copy])])
    turns = rebuilt.conversations["c1"]
    assert [(r["turn"], r["cell"], r["prompt"]) for r in turns] == [
        ("t2", "b", "question t2"),
        ("t1", "c", "copy"),
    ]
    assert len(rebuilt.warnings) == 1 and "cells 1, 3" in rebuilt.warnings[0]


def test_extra_keys_are_accepted_and_the_input_is_not_mutated():
    original = record("t1", future_field={"x": 1}, cell="stale")
    rebuilt = rebuild([("fresh", [original])])
    assert rebuilt.conversations["c1"][0]["cell"] == "fresh"
    assert rebuilt.conversations["c1"][0]["future_field"] == {"x": 1}
    assert original["cell"] == "stale"


def test_records_with_images_restore_old_with_data_and_new_pointing_at_the_output():
    from elelem_kernel.agent.conversation import Conversation
    from elelem_kernel.render.static import bundle
    from tests.pictures import entry

    old = record("t1")
    old["rounds"][0]["calls"][0]["images"] = [{"mime_type": "image/png", "data": entry()["data"]}]
    new = record("t2")
    new["rounds"][0]["calls"][0]["images"] = [entry(64, 48)]
    stored = bundle(new)[1]["elelem"]
    rebuilt = rebuild([("a", [old]), ("b", [stored])])
    assert rebuilt.warnings == []
    turns = rebuilt.conversations["c1"]
    assert turns[1]["rounds"][0]["calls"][0]["images"][0]["in"] == "text/html"
    sent = json.dumps(Conversation("c1", turns).messages("full"), ensure_ascii=False)
    assert "[image from turn 1: PNG, omitted]" in sent  # an old record: no size kept
    assert "[image from turn 2: 64×48 PNG, omitted]" in sent
    assert entry()["data"] not in sent
