"""Prices behind gateways: the person's option `price`, and a cost the gateway reports.

Real HTTP against loopback servers shaped as OpenRouter (cost in the usage chunk) and a
LiteLLM proxy (cost in the `x-litellm-response-cost` header): `tests/wire_servers/gateways.py`.
"""

from __future__ import annotations

import asyncio

import pytest

from elelem_kernel.agent.pricing import parse_price
from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.errors import ConfigError
from elelem_kernel.render.footer import footer_line
from tests.test_cli import cli, folder  # noqa: F401  (the command runner and its folder)
from tests.wire_servers import Round, WireServer, reply
from tests.wire_servers.gateways import litellm, openrouter

#: $0.0028 at 2/8 dollars per million tokens (1,000 in at $2/M, 100 out at $8/M).
USAGE = {"input": 1_000, "output": 100}


@pytest.fixture
def server():
    with WireServer() as s:
        yield s


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    for name in ("ELELEM_BUDGET", "ELELEM_OPTIONS", "ELELEM_PROVIDER", "ELELEM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def session(server, tmp_path, **options):
    return new_session(
        "openai",
        "wire",
        mode="plan",
        workspace=tmp_path,
        base_url=server.base_url("openai"),
        api_key="k",
        **options,
    )


def run(s, prompt):
    return asyncio.run(s.turn(prompt))


@pytest.mark.parametrize(
    "text, row",
    [
        ("2/8", (2.0, 8.0, 2.0, 2.0)),
        ("2/8/0.5", (2.0, 8.0, 0.5, 2.0)),
        (" $0.15 / 0.6 ", (0.15, 0.6, 0.15, 0.15)),
        ("0/0", (0.0, 0.0, 0.0, 0.0)),
    ],
)
def test_a_price_is_input_output_and_optionally_cached_input(text, row):
    assert parse_price(text) == row


@pytest.mark.parametrize("value", ["2", 2, "2/8/1/4", "-2/8", "two/eight", "2/inf", True, "2//8"])
def test_a_bad_price_says_the_form(value):
    with pytest.raises(ConfigError, match="option price must be dollars per million tokens"):
        parse_price(value)


def test_the_persons_price_prices_the_turn_and_a_dollar_budget_can_be_kept(server, tmp_path):
    server.script("openai", *(Round(text="ok", usage=USAGE) for _ in range(3)))
    s = session(server, tmp_path)
    assert run(s, "unpriced").cost is None  # a gateway's model: no known price
    assert "cost unknown" in footer_line(s.conversation.turns[-1])
    s.command("/option price 2/8")
    assert "$0.50" in s.command("/budget 0.50")
    result = run(s, "priced")
    assert result.cost == pytest.approx(0.0028)
    assert result.record["priced_by"] == "option"
    assert "$0.0028 (your price) · $0.0028 of $0.50" in footer_line(result.record)
    s.command("/budget 0.01")  # 8,192 output tokens at $8/M could cost $0.066
    third = run(s, "over")
    assert third.stop == "budget" and len(server.requests) == 2
    assert "this session spent $0.0028 of $0.0100" in third.error


def test_the_option_is_checked_when_given(server, tmp_path):
    with pytest.raises(ConfigError, match="option price must be"):
        session(server, tmp_path, price="lots")
    s = session(server, tmp_path)
    assert "option price must be" in s.command("/option price 2")


def test_openrouter_cost_in_the_usage_chunk_is_the_turns_cost(server, tmp_path):
    server.queue(openrouter(Round(text="hi", usage=USAGE), cost=0.0123))
    server.queue(openrouter(Round(text="again", usage=USAGE), cost=0.0011))
    s = session(server, tmp_path, price="2/8")  # the gateway's figure wins over a price
    first, second = run(s, "one"), run(s, "two")
    assert first.cost == pytest.approx(0.0123) and first.record["priced_by"] == "gateway"
    assert second.cost == pytest.approx(0.0011)
    assert "$0.0123 (gateway)" in footer_line(first.record)
    assert s.accounts.cost == pytest.approx(0.0134)


def test_litellm_cost_header_is_the_turns_cost(server, tmp_path):
    server.queue(litellm(Round(text="hi", usage=USAGE), cost="0.000456"))
    result = run(session(server, tmp_path), "one")
    assert result.cost == pytest.approx(0.000456) and result.record["priced_by"] == "gateway"
    assert "$0.0005 (gateway)" in footer_line(result.record)


@pytest.mark.parametrize("cost", ["-1", "nan", "lots", "1e400"])
def test_a_gateway_cost_that_is_not_an_amount_is_not_taken(server, tmp_path, cost):
    server.queue(litellm(Round(text="hi", usage=USAGE), cost=cost))
    server.queue(litellm(Round(text="hi", usage=USAGE), cost=cost))
    assert run(session(server, tmp_path), "one").cost is None
    priced = run(session(server, tmp_path, price="2/8"), "one")
    assert priced.cost == pytest.approx(0.0028) and priced.record["priced_by"] == "option"


def test_a_tool_round_and_a_gateway_priced_round_add_up(server, tmp_path):
    server.queue(openrouter(Round(calls=[("list", {"path": "."})], usage=USAGE), cost=0.01))
    server.queue(reply("openai", Round(text="done", usage=USAGE)))  # no cost this time
    s = session(server, tmp_path, price="2/8")
    result = run(s, "look")
    assert result.cost == pytest.approx(0.01 + 0.0028)
    assert result.record["priced_by"] == "gateway"
    server.queue(openrouter(Round(calls=[("list", {"path": "."})], usage=USAGE), cost=0.01))
    server.queue(reply("openai", Round(text="done", usage=USAGE)))
    assert run(session(server, tmp_path), "look").cost is None  # part of it has no price


def test_price_from_the_command_line_and_elelem_options(server, folder):  # noqa: F811
    server.script("openai", *(Round(text="Hello.", usage=USAGE) for _ in range(2)))
    env = {**server.env("openai"), "ELELEM_MODEL": "wire"}
    r = cli("ask", "-p", "openai", "-o", "price=2/8", "--budget", "0.50", "hi", cwd=folder, env=env)
    assert r.returncode == 0, r.stderr
    assert "$0.0028 (your price) · $0.0028 of $0.50" in r.stderr
    env["ELELEM_OPTIONS"] = "price=2/8"
    r = cli("ask", "-p", "openai", "--budget", "0.50", "hi", cwd=folder, env=env)
    assert r.returncode == 0 and "$0.0028 (your price)" in r.stderr, r.stderr
    r = cli("ask", "-p", "openai", "-o", "price=cheap", "hi", cwd=folder, env=env)
    assert r.returncode != 0 and "option price must be dollars per million tokens" in r.stderr
