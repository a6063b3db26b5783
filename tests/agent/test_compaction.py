"""Compaction: the oldest turns become a summary, visibly, stored in the turn record."""

from __future__ import annotations

import asyncio
import json

import pytest

from elelem_kernel.agent.conversation import HEADER
from elelem_kernel.agent.session import Session
from elelem_kernel.errors import ProviderError
from elelem_kernel.render.footer import compaction_note
from elelem_kernel.render.static import bundle
from elelem_kernel.store.rebuild import check, rebuild
from tests.scripted import Scripted, say

LONG = "x" * 3_500  # about 1,000 tokens (3.5 characters a token)


@pytest.fixture(autouse=True)
def _same_environment_everywhere(tmp_path, monkeypatch, home):
    """The default system prompt names the working folder and the current directory, and
    reads ~/.agents/AGENTS.md: from tmp_path with a private HOME it is as long on every
    machine and in every checkout, so the small windows below fill at the same round."""
    monkeypatch.chdir(tmp_path)


def session(*rounds, window: int = 3_000) -> tuple[Session, Scripted]:
    provider = Scripted(*rounds)
    s = Session(provider, provider_name="scripted")
    s.facts.context_window = window
    return s, provider


def turn(s: Session, prompt: str, cell: str | None = None, events: list | None = None):
    out = events.append if events is not None else None
    return asyncio.run(s.turn(prompt, renderer=out, cell=cell))


def texts(messages: list[dict]) -> str:
    return json.dumps(messages, ensure_ascii=False)


def test_past_the_threshold_the_oldest_turns_become_a_summary_sent_from_then_on():
    s, p = session(
        say("one"),
        say("two"),
        say("SUMMARY: the person likes FACT-1 and FACT-2"),
        say("three"),
        say("four"),
    )
    turn(s, "FACT-1 " + LONG)
    turn(s, "FACT-2 " + LONG)
    events: list = []
    third = turn(s, "third " + LONG, events=events)

    summary_request = p.sent[2]
    assert summary_request["tools"] == []  # no tools for the summary
    assert "FACT-1" in texts(summary_request["messages"])
    assert summary_request["messages"][0]["role"] == "system"
    sent = p.sent[3]["messages"]
    assert sent[1]["content"].startswith(HEADER) and "FACT-1 and FACT-2" in sent[1]["content"]
    assert LONG not in texts(sent[:-1])  # the old prompts are gone, the new one is last
    entry = third.record["compaction"]
    assert third.record["v"] == 2 and entry["turns"] == 2 and entry["upto"]
    assert entry["after"] < entry["before"] and "failed" not in entry
    notes = [e for e in events if e.get("type") == "compaction"]
    assert len(notes) == 1 and compaction_note(notes[0]).startswith("compacted 2 turns, ")
    assert check(third.record) is None  # a valid v2 record

    turn(s, "fourth")
    later = p.sent[4]["messages"]
    assert "FACT-1 and FACT-2" in later[1]["content"] and LONG not in texts(later[:-3])
    assert third.record["prompt"] in texts(later)  # the compacting turn itself stays


def test_the_note_is_in_the_frozen_output_with_the_summary_inside():
    s, _ = session(say("one"), say("two"), say("SUMMARY-TEXT"), say("three"))
    turn(s, LONG)
    turn(s, LONG)
    record = turn(s, LONG).record
    data, _ = bundle(record)
    assert "<details" in data["text/html"] and "SUMMARY-TEXT" in data["text/html"]
    assert "compacted 2 turns" in data["text/html"]
    assert "compacted 2 turns" in data["text/markdown"]
    assert "[compacted 2 turns" in data["text/plain"]


def test_a_failing_summary_leaves_the_oldest_turns_out_and_says_so():
    s, p = session(
        say("one"),
        say("two"),
        [ProviderError("overloaded, try later")],
        say("three"),
    )
    turn(s, "FACT-1 " + LONG)
    turn(s, "FACT-2 " + LONG)
    events: list = []
    third = turn(s, "third " + LONG, events=events)

    assert third.stop == "end_turn" and third.reply == "three"
    entry = third.record["compaction"]
    assert "overloaded" in entry["failed"] and entry["summary"] == ""
    sent = texts(p.sent[3]["messages"])
    assert "FACT-1" not in sent and "FACT-2" not in sent
    shown = [compaction_note(e) for e in events if e.get("type") == "compaction"]
    assert shown and shown[0].startswith("could not compact (overloaded, try later): left out")
    assert "left out the oldest 2 turns" in bundle(third.record)[0]["text/plain"]


def test_turns_too_big_for_one_summary_request_are_summarised_in_parts():
    s, p = session(say("one"), say("two"), say("three"), say("PART-1"), say("PART-2"), say("4"))
    s.facts.context_window = 200_000
    for i in range(3):
        turn(s, f"FACT-{i} " + "x" * 5_000)
    s.command("/context-window 3000")  # now two turns are too big for one summary request
    s.command("/compact")
    fourth = turn(s, "four")
    asked = [r["messages"] for r in p.sent if r["messages"][0]["content"].startswith("You compact")]
    assert len(asked) == 2
    assert "FACT-0" in texts(asked[0]) and "FACT-0" not in texts(asked[1])
    assert "PART-1" in asked[1][1]["content"] and "FACT-1" in texts(asked[1])
    assert fourth.record["compaction"]["summary"] == "PART-2"
    assert all(len(texts(m)) / 4 < 3_000 for m in asked)
    assert len(texts(p.sent[-1]["messages"])) / 4 < 3_000


def test_an_empty_summary_is_a_failure_too():
    s, _ = session(say("one"), say("two"), say("   "), say("three"))
    turn(s, LONG)
    turn(s, LONG)
    entry = turn(s, LONG).record["compaction"]
    assert entry["failed"] == "the model's summary was empty"


def test_a_summary_still_too_large_falls_back_and_keeps_the_earlier_summary():
    s, p = session(say("one"), say("two"), say("y" * 20_000), say("three"))
    turn(s, LONG)
    turn(s, LONG)
    entry = turn(s, LONG).record["compaction"]
    assert entry["failed"].startswith("the summary is still too large")
    assert "y" * 100 not in texts(p.sent[3]["messages"])


def test_compact_command_compacts_before_the_next_turn_with_what_to_keep():
    s, p = session(say("one"), say("two"), say("SUMMARY"), say("three"), window=200_000)
    turn(s, "first " + LONG)
    turn(s, "second")
    answer = s.command("/compact the file names")
    assert "next turn" in answer and "the file names" in answer
    third = turn(s, "third")
    assert "the file names" in p.sent[2]["messages"][0]["content"]
    assert third.record["compaction"]["focus"] == "the file names"
    assert third.record["compaction"]["turns"] == 1  # all but the newest turn
    sent = p.sent[3]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][1:] == ["second", "third"]
    assert s.conversations.compact_next is None


def test_compact_with_nothing_to_compact_says_so():
    s, _ = session()
    assert "Nothing to compact" in s.command("/compact")
    assert s.conversations.compact_next is None


def test_rerunning_an_old_cell_sees_only_what_was_above_it():
    s, p = session(say("one"), say("two"), say("SUMMARY"), say("three"), say("again"))
    turn(s, "FACT-1 " + LONG, cell="a")
    turn(s, "FACT-2 " + LONG, cell="b")
    turn(s, "third " + LONG, cell="c")
    turn(s, "FACT-2 again", cell="b")
    sent = p.sent[-1]["messages"]
    assert [m["content"][:7] for m in sent if m["role"] == "user"] == ["FACT-1 ", "FACT-2 "]
    assert HEADER not in texts(sent)


def test_restored_records_send_the_summary_not_the_compacted_turns():
    s, _ = session(say("one"), say("two"), say("SUMMARY: FACT-1"), say("three"))
    for i, prompt in enumerate(["FACT-1 " + LONG, "two " + LONG, "three " + LONG]):
        turn(s, prompt, cell=f"cell{i}")
    cells = [(f"cell{i}", [t]) for i, t in enumerate(s.conversation.turns)]
    rebuilt = rebuild(json.loads(json.dumps(cells)))
    assert rebuilt.warnings == []

    fresh, p = session(say("four"))
    fresh.load(rebuilt.conversations, rebuilt.active)
    turn(fresh, "four")
    sent = p.sent[0]["messages"]
    assert "SUMMARY: FACT-1" in sent[1]["content"] and LONG not in texts(sent[:-3])


def test_a_v1_record_reads_as_before_even_with_a_compaction_key():
    s, _ = session()
    base = {"v": 1, "conversation": "c", "prompt": "p", "reply": "r", "rounds": []}
    smuggled = {"upto": "t1", "summary": "INJECTED", "turns": 1}
    cells = [
        ("a", [{**base, "turn": "t1"}]),
        ("b", [{**base, "turn": "t2", "compaction": smuggled}]),
    ]
    rebuilt = rebuild(cells)
    assert rebuilt.warnings == []
    assert all("compaction" not in r for r in rebuilt.conversations["c"])
    s.load(rebuilt.conversations, rebuilt.active)
    assert "INJECTED" not in texts(s.messages("next"))


def test_a_v2_record_needs_its_compaction():
    record = {"v": 2, "conversation": "c", "turn": "t", "prompt": "p", "reply": "r"}
    assert "compaction" in (check(record) or "")
    assert check({**record, "compaction": {"upto": "t0", "summary": "s"}}) is None


def test_a_compaction_naming_a_turn_no_longer_in_the_notebook_is_ignored():
    s, _ = session()
    base = {"v": 1, "conversation": "c", "reply": "r", "rounds": []}
    gone = {"upto": "deleted", "summary": "STALE"}
    s.load(
        {
            "c": [
                {**base, "turn": "t1", "prompt": "one"},
                {**base, "v": 2, "turn": "t2", "prompt": "two", "compaction": gone},
            ]
        },
        "c",
    )
    sent = texts(s.messages("next"))
    assert "STALE" not in sent and "one" in sent and "two" in sent


def test_an_interrupted_summary_interrupts_the_turn_without_a_compaction():
    s, _ = session(say("one"), say("two"), [asyncio.CancelledError()])
    turn(s, LONG)
    turn(s, LONG)
    third = turn(s, LONG)
    assert third.stop == "interrupted" and "compaction" not in third.record


def test_a_long_tool_loop_compacts_the_older_turns_between_rounds():
    from elelem_kernel.agent.toolbox import Toolbox
    from tests.scripted import call

    box = Toolbox()

    @box.add("big", "Returns a lot")
    def big(args):
        return {"text": "z" * 4_400}

    p = Scripted(
        say("one"),
        say("two"),
        call("big", id="a"),
        call("big", id="b"),
        say("SUMMARY-OLD"),
        say("done"),
    )
    s = Session(p, box, provider_name="scripted")
    s.facts.context_window = 4_000
    turn(s, "FACT-1 " + "x" * 2_600)
    turn(s, "FACT-2 " + "x" * 2_600)
    events: list = []
    third = turn(s, "third", events=events)

    assert third.stop == "end_turn" and third.reply == "done"
    assert "You compact" in p.sent[4]["messages"][0]["content"]
    last = p.sent[5]["messages"]
    assert last[1]["content"].startswith(HEADER) and "FACT-1" not in texts(last)
    assert [m["role"] for m in last[3:]] == ["user", "assistant", "tool", "assistant", "tool"]
    assert third.record["compaction"]["turns"] == 2 and third.record["v"] == 2
    assert len(texts(last)) / 4 < 4_000
    assert [e["type"] for e in events].count("compaction") == 1
