"""A local model with a small window (2k, 8k tokens), as a person runs it: what is not sent,
what is cut to fit, what is left out without a summary, and what a full window is called;
a real session over real HTTP against a loopback server shaped like llama.cpp's."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator

import pytest

from elelem_kernel.agent.context import estimate
from elelem_kernel.agent.fitting import fixed_tokens
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.assembly.workspace_tools import add_workspace_tools
from elelem_kernel.providers.openai import OpenAIProvider
from elelem_kernel.render.terminal_view import TerminalRenderer
from tests.agent.test_local_models import LONG, local, turn
from tests.wire_servers import Round, WireServer
from tests.wire_servers.local_servers import llama_cpp_info, overflow_reply, vllm_info


@pytest.fixture
def wire(monkeypatch) -> Iterator[WireServer]:
    for var in ("ELELEM_CONTEXT_WINDOW", "ELELEM_OPTIONS", "ELELEM_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with WireServer() as server:
        yield server


def posts(server: WireServer) -> list[dict]:
    return [r.body for r in server.requests if r.method == "POST"]


def with_tools(server: WireServer, description_chars: int, kind: str = "execute") -> Session:
    """A session on `server` whose toolbox has a small read tool and one `kind` tool with a
    description of `description_chars` characters."""
    box = Toolbox()
    box.add("look", "Look at something", {"what": {"type": "string"}})(lambda a: {"seen": 1})
    box.add("big", "B" * description_chars, {"x": {"type": "string"}}, kind=kind)(
        lambda a: {"done": 1}
    )
    provider = OpenAIProvider(base_url=server.base_url("openai"), backoff=0.001)
    return Session(provider, box, provider_name="openai", mode="auto")


@pytest.mark.parametrize("server", ["llama.cpp", "vllm"])
def test_a_fixed_part_larger_than_the_window_is_not_sent_and_the_ways_out_are_named(wire, server):
    info = llama_cpp_info if server == "llama.cpp" else vllm_info
    wire.info.update(info("gpt-4.1", 2048))
    s = with_tools(wire, 9_000, kind="write")
    result = turn(s, "hi")
    assert result.stop == "error" and posts(wire) == []
    error = result.error or ""
    assert "nothing was sent" in error and "auto mode" in error and "2.0k" in error
    assert "--mode plan" in error and "-c 8192" in error and "-o context_window=N" in error
    assert "--mode verify" in error
    assert "--mode build" not in error  # build offers the big tool too: it would not fit


@pytest.mark.parametrize("server", ["llama.cpp", "vllm"])
def test_after_a_refusal_a_failed_summary_still_retries_when_leaving_turns_out_made_it_fit(
    wire, server
):
    wire.script("openai", Round(text="one"), Round(text="two"))
    s = local(wire)
    turn(s, "FACT-1 " + LONG)
    turn(s, "FACT-2 " + LONG)
    wire.queue(overflow_reply(server, requested=2600, limit=2048))
    wire.script("openai", Round(text="SUMMARY: the pers", stop="length"), Round(text="three"))
    events: list = []
    third = turn(s, "third", events)
    assert third.stop == "end_turn" and third.reply == "three", third.error
    entry = third.record["compaction"]
    assert "cut off" in entry["failed"] and entry["turns"] == 2
    last = posts(wire)[-1]
    assert [m["content"] for m in last["messages"] if m["role"] == "user"] == ["third"]


def test_a_window_too_small_for_a_summary_leaves_turns_out_without_asking_for_one(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=2048))
    s = with_tools(wire, 4_600)
    assert 1_400 < fixed_tokens(s) < 1_600
    for n in range(2):
        wire.script("openai", Round(text=f"reply {n}"))
        assert turn(s, f"turn {n} " + "y" * 500).stop == "end_turn"
    wire.script("openai", Round(text="three"))
    events: list = []
    third = turn(s, "turn 2", events)
    assert third.reply == "three"
    assert all(body.get("tools") for body in posts(wire))  # no summary request was sent
    assert "no room for a summary" in third.record["compaction"]["failed"]
    assert not any(e.get("state") == "compacting" for e in events)
    assert any(e["type"] == "compaction" for e in events)


def test_a_reply_that_filled_the_window_is_not_called_a_max_tokens_cut(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=2048))
    wire.script(
        "openai",
        Round(text="a long answ", stop="length", usage={"input": 1_900, "output": 148}),
    )
    s = local(wire)
    err = io.StringIO()
    renderer = TerminalRenderer(io.StringIO(), err, color=False)
    result = asyncio.run(s.turn("hello", renderer=renderer))
    assert result.stop == "context_full"
    assert "context window of 2,048 tokens is full" in (result.error or "")
    assert "/compact" in (result.error or "")
    assert "max_tokens=N" not in err.getvalue() and "is full" in err.getvalue()


def test_a_reply_cut_at_its_output_limit_is_still_a_max_tokens_cut(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=2048))
    wire.script("openai", Round(text="a long answ", stop="length", usage={"input": 90}))
    result = turn(local(wire), "hello")
    assert result.stop == "max_tokens" and result.error is None


def test_a_huge_tool_result_is_cut_to_what_is_left_of_the_window(wire, tmp_path):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    (tmp_path / "big.txt").write_text(
        "".join(f"line {n}: some words of a long file\n" for n in range(2_000))
    )
    provider = OpenAIProvider(base_url=wire.base_url("openai"), backoff=0.001)
    s = Session(provider, provider_name="openai", mode="plan", workspace=tmp_path)
    add_workspace_tools(s.toolbox, s.tool_context)
    wire.script("openai", Round(calls=[("read", {"path": "big.txt"})]), Round(text="done"))
    result = turn(s, "what is in big.txt?")
    assert result.stop == "end_turn", result.error
    sent = posts(wire)[-1]
    answer = json.loads(sent["messages"][-1]["content"])
    assert "showing lines 1-" in answer["truncated"] and "offset=" in answer["truncated"]
    assert estimate(sent["messages"], sent["tools"]) < 8192 - 1024  # room for the reply
    assert answer["total_lines"] == 2_000


def test_a_refused_turn_is_not_sent_again_in_full(wire):
    wire.script("openai", Round(text="one"))
    s = local(wire)
    s.conversations.history = "full"
    turn(s, "first")
    wire.queue(overflow_reply("llama.cpp", requested=30_000, limit=8192))
    refused = turn(s, "PASTED " + "z" * 60_000)
    assert refused.stop == "error" and refused.record["context"]["refused"] is True
    wire.script("openai", Round(text="fine"))
    after = turn(s, "next")
    assert after.reply == "fine"
    sent = json.dumps(posts(wire)[-1]["messages"])
    assert "PASTED" in sent and len(sent) < 10_000


def test_a_small_window_gets_the_brief_fixed_prompt_build_mode_at_most_1000_tokens(tmp_path):
    from bench.fixed_prompt import GOAL, sizes

    measured = sizes(tmp_path)
    for mode, large in measured["large"].items():
        assert measured["small"][mode] < large * 0.8, mode
    assert measured["small"]["build"] <= GOAL < measured["large"]["build"]


def test_brief_tool_descriptions_still_get_tool_calls_run(wire, tmp_path):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=4096))
    (tmp_path / "notes.txt").write_text("FACT-7 is here\n")
    provider = OpenAIProvider(base_url=wire.base_url("openai"), backoff=0.001)
    s = Session(provider, provider_name="openai", mode="build", workspace=tmp_path)
    add_workspace_tools(s.toolbox, s.tool_context)
    wire.script("openai", Round(calls=[("read", {"path": "notes.txt"})]), Round(text="done"))
    result = turn(s, "what is in notes.txt?")
    assert result.stop == "end_turn" and result.reply == "done"
    first, second = posts(wire)
    read = next(t for t in first["tools"] if t["function"]["name"] == "read")
    assert read["function"]["description"] == "Read a text file."
    assert "description" not in read["function"]["parameters"]["properties"]["path"]
    assert "You are elelem" in first["messages"][0]["content"]
    assert len(first["messages"][0]["content"]) < 600
    assert "FACT-7" in second["messages"][-1]["content"]


def test_a_huge_result_that_is_not_one_text_is_cut_as_a_whole(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    box = Toolbox()
    cells = [{"index": n, "source": f"cell {n} " + "w" * 400} for n in range(200)]
    box.add("cells", "Many cells")(lambda a: {"path": "big.ipynb", "cells": cells})
    provider = OpenAIProvider(base_url=wire.base_url("openai"), backoff=0.001)
    s = Session(provider, box, provider_name="openai")
    wire.script("openai", Round(calls=[("cells", {})]), Round(text="done"))
    assert turn(s, "look").reply == "done"
    sent = posts(wire)[-1]
    answer = json.loads(sent["messages"][-1]["content"])
    assert answer["ok"] is True and '"cell 0 ' in answer["result"]
    assert answer["truncated"].startswith("showing ") and "of result" in answer["truncated"]
    assert estimate(sent["messages"], sent["tools"]) < 8192 - 1024


def test_an_assumed_window_is_never_called_full(wire):
    wire.script("openai", Round(text="a long answ", stop="length", usage={"input": 8_150}))
    result = turn(local(wire), "hello")
    assert result.stop == "max_tokens"  # 8,192 is only assumed: the model's may be larger


def test_a_result_that_only_looks_like_a_read_is_cut_as_text():
    from elelem_kernel.agent.fitting import bound_result

    odd = {"ok": True, "lines": "many", "total_lines": 3, "content": "x" * 10_000}
    out = bound_result(odd, 300)
    assert out["content"].startswith("xxx") and len(out["content"]) < 1_200
    assert out["truncated"].startswith("showing ") and "of content" in out["truncated"]
    assert estimate([{"content": json.dumps(out)}]) <= 300
