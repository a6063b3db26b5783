"""Honest numbers for a model on a local server: its window (asked, assumed or learned from
a refusal), its cost, the model it names, calibrated estimates, and compaction's limits;
a real session over real HTTP against the loopback wire server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from elelem_kernel.agent.compaction import summary_limit
from elelem_kernel.agent.context import UNKNOWN_WINDOW, estimate
from elelem_kernel.agent.session import Session
from elelem_kernel.providers.openai import OpenAIProvider
from elelem_kernel.render.footer import footer_line
from tests.wire_servers import Reply, Round, WireServer
from tests.wire_servers.local_servers import llama_cpp_info, overflow_reply

LONG = "x" * 3_500  # about 1,000 tokens


@pytest.fixture
def wire(monkeypatch) -> Iterator[WireServer]:
    for var in ("ELELEM_CONTEXT_WINDOW", "ELELEM_OPTIONS", "ELELEM_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with WireServer() as server:
        yield server


def local(server: WireServer, **options) -> Session:
    provider = OpenAIProvider(base_url=server.base_url("openai"), backoff=0.001, **options)
    return Session(provider, provider_name="openai")


def turn(s: Session, prompt: str, events: list | None = None):
    return asyncio.run(s.turn(prompt, renderer=events.append if events is not None else None))


def test_a_local_servers_window_is_asked_not_taken_from_gpt_4_1(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    wire.script("openai", Round(text="hi", model="smollm2"))
    s = local(wire)
    result = turn(s, "hello")
    assert result.record["context"]["window"] == 8192
    assert s.facts.window() == (8192, "reported by the openai server")
    assert "assumed" not in result.record["context"]


def test_a_server_that_does_not_say_gets_a_small_assumed_window_shown_as_unknown(wire):
    wire.script("openai", Round(text="hi"))
    s = local(wire)
    result = turn(s, "hello")
    window, source = s.facts.window()
    assert window == UNKNOWN_WINDOW and source.startswith("unknown")
    assert result.record["context"]["assumed"] is True
    assert footer_line(result.record).count(f"/{UNKNOWN_WINDOW / 1000:.1f}k?") == 1
    assert "unknown" in s.command("/context-window")


def test_local_costs_are_unknown_and_the_served_model_is_shown(wire):
    wire.script("openai", Round(text="hi", model="smollm2"))
    s = local(wire)
    result = turn(s, "hello")
    assert s.model == "gpt-4.1" and result.cost is None and s.accounts.cost is None
    assert result.record["served_model"] == "smollm2"
    line = footer_line(result.record)
    assert "openai/smollm2" in line and "cost unknown" in line and "$" not in line


def test_a_context_overflow_teaches_the_window_compacts_and_retries_once(wire):
    wire.script("openai", Round(text="one"), Round(text="two"))
    s = local(wire)
    s.facts.context_window = None
    turn(s, "FACT-1 " + LONG)
    turn(s, "FACT-2 " + LONG)
    wire.queue(overflow_reply("llama.cpp", requested=24075, limit=8192))
    wire.script(
        "openai", Round(text="SUMMARY of FACT-1"), Round(text="three", usage={"input": 9000})
    )
    events: list = []
    third = turn(s, "third", events)

    assert third.stop == "end_turn" and third.reply == "three"
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert any("24,075 tokens" in n and "8,192" in n and "once more" in n for n in notices)
    assert third.record["compaction"]["turns"] == 2 and "failed" not in third.record["compaction"]
    assert s.facts.window() == (8192, "stated by the server when it refused a request")
    assert len(third.record["rounds"]) == 1  # the refused request is not a round
    # the server counts more than the estimate said: later estimates of it grow
    assert s.facts.calibration[s.conversation.id] > 1


def test_a_second_overflow_is_an_error_that_quotes_the_server(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=200_000))
    wire.script("openai", Round(text="one"))
    s = local(wire)
    turn(s, "FACT-1 " + LONG)
    wire.queue(overflow_reply("vllm", requested=9000, limit=4096))
    wire.script("openai", Round(text="SUMMARY"))
    wire.queue(overflow_reply("vllm", requested=9000, limit=4096))
    result = turn(s, "short")
    assert result.stop == "error" and "maximum context length is 4096" in result.error
    assert wire.pending() == 0  # refused, compacted, refused again: no third try


def test_an_overflow_with_nothing_to_compact_is_an_error_at_once(wire):
    wire.queue(overflow_reply("llama.cpp", requested=9000, limit=8192))
    result = turn(local(wire), "x" * 30_000)
    assert result.stop == "error" and "exceeds the available context size" in result.error
    assert len([r for r in wire.requests if r.method == "POST"]) == 1


def test_numeric_text_is_estimated_conservatively():
    numbers = [{"role": "user", "content": ", ".join(str(n) for n in range(10_000, 14_000))}]
    chars = len(str(numbers))
    assert estimate(numbers) > chars / 4 * 1.6  # 4 characters a token was half the truth


def test_the_servers_count_calibrates_the_next_estimate_of_the_conversation(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=200_000))
    s = local(wire)
    wire.script("openai", Round(text="one", usage={"input": 1}))
    turn(s, "a")
    raw = s.facts._raw
    wire.script("openai", Round(text="two", usage={"input": raw * 3}))
    turn(s, "b")
    assert s.facts.calibration[s.conversation.id] == pytest.approx(3 * raw / s.facts._raw, rel=0.01)
    events: list = []
    wire.script("openai", Round(text="three"))
    turn(s, "c", events)
    waiting = [e for e in events if e.get("state") == "waiting"][0]
    assert waiting["context"]["used"] > 2 * s.facts._raw  # the estimate before the server counted
    s.conversations.new()
    assert s.facts.estimate([{"role": "user", "content": "x" * 350}]) == estimate(
        [{"role": "user", "content": "x" * 350}]
    )


def test_the_summary_gets_its_own_output_limit_not_max_tokens(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    s = local(wire, max_tokens=350)
    wire.script("openai", Round(text="one"), Round(text="two"))
    turn(s, "FACT-1 " + LONG)
    turn(s, "FACT-2 " + LONG)
    s.command("/compact")
    wire.script("openai", Round(text="SUMMARY"), Round(text="three"))
    third = turn(s, "third")
    posts = [r.body for r in wire.requests if r.method == "POST"]
    summary = next(b for b in posts if "You compact" in b["messages"][0]["content"])
    assert summary["max_tokens"] == summary_limit(8192) != 350
    assert posts[-1]["max_tokens"] == 350
    assert third.record["compaction"]["turns"] == 1


def test_a_cut_off_summary_is_a_failure_that_says_so(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    s = local(wire)
    wire.script("openai", Round(text="one"), Round(text="two"))
    turn(s, "FACT-1 " + LONG)
    turn(s, "FACT-2 " + LONG)
    s.command("/compact")
    wire.script("openai", Round(text="SUMMARY: the person", stop="length"), Round(text="three"))
    third = turn(s, "third")
    entry = third.record["compaction"]
    assert "cut off" in entry["failed"] and "SUMMARY: the person" not in entry["summary"]


def test_compact_that_would_make_the_request_larger_keeps_the_conversation(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    s = local(wire)
    wire.script("openai", Round(text="one"), Round(text="two"))
    turn(s, "first")
    turn(s, "second")
    s.command("/compact")
    wire.script("openai", Round(text="A much longer summary than the turns it replaces. " * 20))
    wire.script("openai", Round(text="three"))
    events: list = []
    third = turn(s, "third", events)
    assert "compaction" not in third.record
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert any("kept the conversation as it was" in n and "larger" in n for n in notices)
    last = [r.body for r in wire.requests if r.method == "POST"][-1]
    assert [m["content"] for m in last["messages"] if m["role"] == "user"] == [
        "first",
        "second",
        "third",
    ]


def test_a_second_compaction_counts_every_turn_its_summary_covers(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    s = local(wire)
    for n in range(3):
        wire.script("openai", Round(text=f"reply {n}"))
        turn(s, f"turn {n} " + LONG)
    s.command("/compact")
    wire.script("openai", Round(text="S1"), Round(text="four"))
    first = turn(s, "turn 3")
    assert first.record["compaction"]["turns"] == 2
    for n in range(4, 6):
        wire.script("openai", Round(text=f"reply {n}"))
        turn(s, f"turn {n} " + LONG)
    s.command("/compact")
    wire.script("openai", Round(text="S2"), Round(text="seven"))
    second = turn(s, "turn 6")
    assert second.record["compaction"]["turns"] == 5  # not just the 3 new ones


def test_a_window_asked_ahead_is_asked_once_and_the_turn_takes_its_answer(wire):
    # a front asks as a turn begins (jupyter/shell_front.py); the turn awaits that question
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    wire.script("openai", Round(text="hi", model="smollm2"))
    s = local(wire)

    async def ahead_then_turn():
        s.facts.ask_window_ahead()
        s.facts.ask_window_ahead()  # asked again while under way: the same question
        return await s.turn("hello")

    result = asyncio.run(ahead_then_turn())
    assert result.record["context"]["window"] == 8192
    assert [r.path for r in wire.info_requests] == ["/v1/models", "/props"]
    s.facts.ask_window_ahead()  # known now: nothing asked
    wire.script("openai", Round(text="hi again", model="smollm2"))
    assert turn(s, "again").record["context"]["window"] == 8192
    assert len(wire.info_requests) == 2


def test_a_window_question_cancelled_with_its_turn_is_asked_again(wire):
    info = llama_cpp_info("smollm2", n_ctx=8192)
    listing = json.dumps(info["/v1/models"]).encode()
    wire.info.update(info)
    wire.info["/v1/models"] = Reply(200, {}, [listing], stream=False, delay=1.0)
    s = local(wire)

    async def stopped_then_asked():
        waiting = asyncio.ensure_future(s.facts.probe_window())
        await asyncio.sleep(0.2)
        waiting.cancel()  # the person stopped the turn while the server was slow
        with pytest.raises(asyncio.CancelledError):
            await waiting
        wire.info["/v1/models"] = info["/v1/models"]
        return await s.facts.probe_window()

    assert asyncio.run(stopped_then_asked()) == 8192
    assert s.facts.window() == (8192, "reported by the openai server")
