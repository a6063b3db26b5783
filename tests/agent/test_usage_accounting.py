"""What a turn spent when the server does not say, or says nonsense; the output cap a
budget's request carries; the budget's worst case on a small window.

Real HTTP against a loopback server speaking Chat Completions, shaped as the servers that
misbehave (no usage chunk, counts below zero: `tests/wire_servers/gateways.py`).
"""

from __future__ import annotations

import asyncio

import pytest

from elelem_kernel.agent.budget import ASSUMED_OUTPUT
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.providers.openai import LOCAL_MAX_TOKENS, OpenAIProvider
from elelem_kernel.render.footer import footer_line
from tests.wire_servers import Round, WireServer, reply
from tests.wire_servers.gateways import with_counts, without_usage
from tests.wire_servers.local_servers import llama_cpp_info


@pytest.fixture
def server():
    with WireServer() as s:
        yield s


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    for name in ("ELELEM_BUDGET", "ELELEM_OPTIONS", "ELELEM_CONTEXT_WINDOW"):
        monkeypatch.delenv(name, raising=False)


def session(server, tmp_path, **options):
    provider = OpenAIProvider(
        model="wire", base_url=server.base_url("openai"), api_key="k", **options
    )
    return Session(provider, Toolbox(), provider_name="openai", workspace=tmp_path)


def run(s, prompt):
    return asyncio.run(s.turn(prompt))


def test_a_server_that_reports_no_usage_still_spends_a_token_budget(server, tmp_path):
    answer = "Here is a longer answer, so that the output counts for something. " * 4
    server.queue(*(without_usage(Round(text=answer)) for _ in range(12)))
    s = session(server, tmp_path, max_tokens=100)
    first = run(s, "one")
    used = first.record["context"]["used"]  # the estimate the meter showed for the request
    assert first.record["usage"]["input"] == used > 0
    assert 0 < first.record["usage"]["output"] <= 100
    assert first.record["usage_estimated"] is True
    footer = footer_line(first.record)
    assert f"in ~{used:,} · out ~{first.record['usage']['output']:,}" in footer
    s.command(f"/budget {4 * used} tokens")
    stops = [run(s, f"turn {n}").stop for n in range(10)]
    assert "budget" in stops, "a budget never binds when the server reports no usage"
    assert stops.index("budget") <= 4
    spent = s.accounts.ledger.total().tokens
    assert spent > 0 and s.conversation.turns[-1]["budget"][0]["spent"] > 0


def test_counts_below_zero_are_missing_not_negative(server, tmp_path):
    server.queue(with_counts(Round(text="ok"), prompt_tokens=-2_099_979, completion_tokens=-5))
    s = session(server, tmp_path, max_tokens=100)
    s.command("/budget 30k tokens")
    result = run(s, "hi")
    usage = result.record["usage"]
    assert usage["input"] == result.record["context"]["used"] > 0
    assert usage["output"] > 0 and result.record["usage_estimated"] is True
    assert s.accounts.ledger.total().tokens == usage["input"] + usage["output"]
    assert "of 30k tokens" in footer_line(result.record)
    assert "-" not in footer_line(result.record).split("·")[0]


def test_a_server_count_is_taken_as_it_is(server, tmp_path):
    server.queue(reply("openai", Round(text="ok", usage={"input": 321, "output": 4})))
    result = run(session(server, tmp_path), "hi")
    assert result.record["usage"]["input"] == 321 and result.record["usage"]["output"] == 4
    assert "usage_estimated" not in result.record
    assert "in 321 · out 4 ·" in footer_line(result.record)


def test_a_budget_request_carries_the_output_cap_it_was_allowed(server, tmp_path):
    # as at api.openai.com: no output cap is sent unless one is chosen
    server.script("openai", Round(text="one"), Round(text="two"))
    s = session(server, tmp_path, max_tokens="off")
    run(s, "no budget")
    assert "max_tokens" not in server.requests[0].body
    s.command("/budget 30k tokens")
    run(s, "with a budget")
    assert server.requests[1].body["max_tokens"] == ASSUMED_OUTPUT
    # a provider cap smaller than the budget's worst case is left as it is
    server.script("openai", Round(text="three"))
    s = session(server, tmp_path, max_tokens=500)
    s.command("/budget 30k tokens")
    run(s, "a small cap")
    assert server.requests[2].body["max_tokens"] == 500


def test_a_small_window_limits_the_worst_case_and_the_cap(server, tmp_path):
    server.info.update(llama_cpp_info("wire", n_ctx=2048))
    server.script("openai", Round(text="fits", usage={"input": 700, "output": 20}))
    s = session(server, tmp_path)
    s.command("/budget 5000 tokens")  # under 8,192 output + input: blocked before
    result = run(s, "hi")
    assert result.stop == "end_turn", result.error
    fresh = session(server, tmp_path)  # the same first request, its window known now
    asyncio.run(fresh.facts.probe_window())
    estimate = fresh.facts.estimate(fresh.messages("hi"), [])
    sent = server.requests[0].body["max_tokens"]
    assert sent == 2048 - estimate < LOCAL_MAX_TOKENS


def test_the_refusal_shows_left_and_need_apart_when_rounding_joins_them(server, tmp_path):
    s = session(server, tmp_path, max_tokens=1000)
    need = s.facts.estimate(s.messages("hi"), []) + 1000
    s.command(f"/budget {need - 30} tokens")
    result = run(s, "hi")
    assert result.stop == "budget" and server.requests == []
    assert f"{need - 30:,} tokens left; the next request could use up to {need:,} tokens" in (
        result.error
    )


def test_a_refused_elelem_budget_is_not_shown_as_kept(server, tmp_path, monkeypatch):
    monkeypatch.setenv("ELELEM_BUDGET", "0.50")
    s = session(server, tmp_path)  # a local server's model: no price
    result = run(s, "hi")
    assert result.stop == "error" and "its price is unknown" in result.error
    assert "-o price=2/8" in result.error
    assert "budget" not in result.record
    assert "$0.50" not in footer_line(result.record)


def test_the_worst_case_is_the_output_cap_the_provider_really_sends():
    from elelem_kernel.agent.budget import output_limit
    from elelem_kernel.providers.anthropic import AnthropicProvider

    # anthropic raises an unset max_tokens above the thinking budget: 16,000 + 4,096
    assert output_limit(AnthropicProvider(api_key="k", thinking="high")) == 20_096
    assert output_limit(AnthropicProvider(api_key="k")) == 8_192
    assert output_limit(AnthropicProvider(api_key="k", max_tokens=30_000, thinking="high")) == (
        30_000
    )
