"""Budgets: parsing what people type, and turns over real HTTP that stop before passing one.

The model answers from a loopback server speaking the OpenAI wire format with usage in
every round and a priced model name (gpt-4.1: $2 in, $8 out per million tokens).
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from elelem_kernel.agent.budget import (
    ASSUMED_OUTPUT,
    Budget,
    Ledger,
    output_limit,
    parse,
    spent_by,
)
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.errors import ConfigError
from elelem_kernel.events import as_provider
from elelem_kernel.providers.openai import OpenAIProvider
from tests.wire_servers import Round, WireServer

#: One turn's usage: $0.28 with gpt-4.1 (100k in at $2/M, 10k out at $8/M), 110k tokens.
BIG = {"input": 100_000, "output": 10_000}


@pytest.fixture
def server():
    with WireServer() as s:
        yield s


@pytest.fixture(autouse=True)
def no_env_budget(monkeypatch):
    monkeypatch.delenv("ELELEM_BUDGET", raising=False)


class Official(OpenAIProvider):
    """The OpenAI provider as if at api.openai.com, where gpt-4.1 has its price; it talks to
    the loopback server (a local server's models are not priced)."""

    official = True


def session(server, tmp_path, model="gpt-4.1", toolbox=None):
    provider = Official(
        model=model, base_url=server.base_url("openai"), api_key="k", max_tokens=1000
    )
    return Session(provider, toolbox, provider_name="openai", model=model, workspace=tmp_path)


def run(s, prompt, events=None):
    return asyncio.run(s.turn(prompt, renderer=events.append if events is not None else None))


# -- what people type ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, budget",
    [
        ("0.50", Budget(0.5, "usd", "session")),
        ("$2", Budget(2.0, "usd", "session")),
        (" $ 2 / session ", Budget(2.0, "usd", "session")),
        ("200k tokens", Budget(200_000, "tokens", "session")),
        ("1.5M tokens", Budget(1_500_000, "tokens", "session")),
        ("5000 token", Budget(5_000, "tokens", "session")),
        ("0.50/turn", Budget(0.5, "usd", "turn")),
        ("200K Tokens/Turn", Budget(200_000, "tokens", "turn")),
    ],
)
def test_budgets_in_dollars_or_tokens_per_session_or_turn(text, budget):
    assert parse(text) == budget


@pytest.mark.parametrize("text", ["off", "OFF", "", "  ", "none"])
def test_off_and_empty_mean_no_budget(text):
    assert parse(text) is None


@pytest.mark.parametrize(
    "text, says",
    [
        ("200k", "write 200k tokens for tokens, or a dollar amount"),
        ("$200k tokens", "dollars or tokens, not both"),
        ("0", "it must be more than zero"),
        ("0.1 tokens", "it must be more than zero"),
        ("-1", "give dollars (0.50, $2) or tokens (200k tokens"),
        ("2 dollars", "give dollars"),
        ("nan", "give dollars"),
        ("1e3", "give dollars"),
        ("2/week", "optionally /turn"),
    ],
)
def test_a_bad_budget_says_the_forms_that_work(text, says):
    with pytest.raises(ConfigError) as error:
        parse(text)
    assert says in str(error.value) and repr(text.strip()) in str(error.value)


def test_a_bad_elelem_budget_names_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("ELELEM_BUDGET", "lots")
    with pytest.raises(ConfigError, match="ELELEM_BUDGET: bad budget 'lots'"):
        Session(OpenAIProvider(api_key="k"), workspace=tmp_path)
    monkeypatch.setenv("ELELEM_BUDGET", "0.50/turn")
    s = Session(OpenAIProvider(api_key="k"), workspace=tmp_path)
    assert s.accounts.ledger.budgets == {"turn": Budget(0.5, "usd", "turn")}


def test_the_output_limit_is_the_providers_max_tokens_else_an_assumed_one():
    assert output_limit(OpenAIProvider(api_key="k", max_tokens=1234)) == 1234
    assert output_limit(OpenAIProvider(api_key="k")) == ASSUMED_OUTPUT  # api.openai.com: none
    assert output_limit(as_provider(object())) == ASSUMED_OUTPUT


# -- turns that stop ----------------------------------------------------------------------


def test_a_session_budget_stops_the_third_turn_before_its_request(server, tmp_path):
    server.script("openai", *(Round(text=f"answer {i}", usage=BIG) for i in range(3)))
    s = session(server, tmp_path)
    assert "$0.50" in s.command("/budget 0.50")
    first, second = run(s, "one"), run(s, "two")
    assert (first.stop, second.stop) == ("end_turn", "end_turn")
    events: list[dict] = []
    third = run(s, "three", events)
    assert len(server.requests) == 2  # the third request was never sent
    assert third.stop == "budget" and third.record["stop"] == "budget"
    assert third.error.startswith("budget: this session spent $0.56 of $0.50, $0.00 left")
    assert re.search(
        r"the next request could cost up to \$0\.0\d+, so it was not sent", third.error
    )
    assert "raise it: --budget 1 (command line, %%elelem) or /budget 1" in third.error
    assert third.record["budget"] == [
        {"amount": 0.5, "unit": "usd", "per": "session", "spent": pytest.approx(0.56)}
    ]
    (end,) = [e for e in events if e["type"] == "turn_end"]
    assert end["stop"] == "budget" and end["budget"] == third.record["budget"]
    assert first.record["budget"][0]["spent"] == pytest.approx(0.28)
    assert "spent $0.56, $0.00 left" in s.command("/budget")


def test_a_token_budget_counts_input_and_output_tokens(server, tmp_path):
    server.script("openai", *(Round(text="ok", usage=BIG) for _ in range(3)))
    s = session(server, tmp_path)
    s.command("/budget 200k tokens")
    assert [run(s, p).stop for p in ("one", "two", "three")] == ["end_turn"] * 2 + ["budget"]
    assert len(server.requests) == 2
    assert s.conversation.turns[-1]["budget"] == [
        {"amount": 200_000, "unit": "tokens", "per": "session", "spent": 220_000}
    ]
    assert "this session spent 220k tokens of 200k tokens" in s.conversation.turns[-1]["error"]


def test_a_per_turn_budget_stops_a_tool_loop_and_leaves_the_last_calls_unrun(server, tmp_path):
    box = Toolbox()
    ran: list[int] = []

    @box.add("count", "Count", {"n": {"type": "integer"}})
    def count(args):
        ran.append(args.get("n"))
        return {"counted": args.get("n")}

    # each round: $0.108 (50k in, 1k out); the budget pays for one round and the next request
    usage = {"input": 50_000, "output": 1_000}
    rounds = [Round(calls=[("count", {"n": i})], usage=usage) for i in range(2)]
    server.script("openai", *rounds)
    s = session(server, tmp_path, toolbox=box)
    s.command("/budget 0.20/turn")
    events: list[dict] = []
    result = run(s, "count forever", events)
    assert result.stop == "budget" and len(server.requests) == 2
    assert ran == [0]  # the second round's call was shown, not run
    last = result.record["rounds"][-1]["calls"]
    assert last[0]["ok"] is False
    assert "not run: over the budget: this turn spent $0.22 of $0.20/turn" in last[0]["result"]
    assert {"type": "tool_state", "state": "over budget"}.items() <= next(
        e for e in events if e.get("state") == "over budget"
    ).items()
    stops = {e["index"] for e in events if e["type"] == "block_stop"}
    assert stops == {e["index"] for e in events if e["type"] == "block_start"}
    # the per-turn budget starts again at zero on the next turn
    server.script("openai", Round(text="fine", usage={"input": 10, "output": 1}))
    assert (run(s, "hello").reply, len(server.requests)) == ("fine", 3)


def test_a_stream_is_never_cut_for_the_budget(server, tmp_path):
    # the estimate allows the request; what the round really spends passes the budget
    server.script("openai", Round(text="a long answer", usage={"input": 1_000_000}))
    s = session(server, tmp_path)
    s.command("/budget 0.05")
    result = run(s, "go")
    assert result.stop == "end_turn" and result.reply == "a long answer"
    assert result.record["budget"][0]["spent"] == pytest.approx(2.0, abs=0.001)
    assert run(s, "more").stop == "budget" and len(server.requests) == 1


def test_restore_counts_what_the_records_already_spent(server, tmp_path):
    server.script("openai", *(Round(text="ok", usage=BIG) for _ in range(2)))
    before = session(server, tmp_path)
    records = [run(before, p).record for p in ("one", "two")]
    records[1] = {**records[1], "cost": None}  # an older record without a cost: priced now
    json.loads(json.dumps(records))  # records are plain JSON, as in a notebook

    after = session(server, tmp_path)
    after.accounts.ledger.set(parse("0.50"), after.facts)
    after.load({records[0]["conversation"]: records}, records[0]["conversation"])
    assert after.accounts.ledger.total().usd == pytest.approx(0.56)
    result = run(after, "three")
    assert result.stop == "budget" and len(server.requests) == 2
    assert "this session spent $0.56 of $0.50" in result.error
    # a turn run here and then restored again is not counted twice
    after.load({"c": [*records, result.record]}, "c")
    assert after.accounts.ledger.total().usd == pytest.approx(0.56)


def test_records_of_unknown_price_count_their_tokens_and_say_so():
    spent = spent_by({"provider": "openai", "model": "mystery", "usage": BIG, "cost": None})
    assert (spent.usd, spent.tokens, spent.unpriced) == (0.0, 110_000, 1)
    ledger = Ledger()
    ledger.restore({"c": [{"turn": "t", "provider": "openai", "model": "mystery", "usage": BIG}]})
    assert "1 turn of unknown price not in the dollars" in ledger.describe()


def test_an_unknown_price_refuses_a_dollar_budget_and_names_the_token_form(server, tmp_path):
    s = session(server, tmp_path, model="mystery-model")
    answer = s.command("/budget 2")
    assert "cannot be kept for openai/mystery-model: its price is unknown" in answer
    assert "in tokens instead, e.g. --budget '200k tokens'" in answer
    assert s.accounts.ledger.budgets == {}  # refused, not set
    # a dollar budget in force when the model changes to an unpriced one: refused, not sent
    s.accounts.ledger.budgets["session"] = Budget(2.0)
    result = run(s, "hi")
    assert result.stop == "error" and "its price is unknown" in result.error
    assert server.requests == []
    assert "200k tokens" in s.command("/budget 200k tokens")
    server.script("openai", Round(text="ok"))
    s.command("/budget off")
    s.command("/budget 200k tokens")
    assert run(s, "hi").stop == "end_turn"


def test_budget_command_shows_sets_and_removes(server, tmp_path):
    s = session(server, tmp_path)
    assert s.command("/budget").startswith("No budget set. This session spent $0.00 and 0 tokens")
    s.command("/budget 2")
    answer = s.command("/budget 0.10/turn")
    assert "session: **$2.00**, spent $0.00, $2.00 left" in answer
    assert "per turn: **$0.10/turn**" in answer
    assert s.command("/budget off").startswith("No budget set")
    assert "bad budget 'lots'" in s.command("/budget lots")
    assert "Usage: `/budget [AMOUNT[/turn] | off]`" in s.command("/budget lots")


def test_a_budget_for_one_turn_is_put_back_after_it(server, tmp_path):
    s = session(server, tmp_path)
    s.command("/budget 2")
    with s.accounts.ledger.applied("0.50/turn", s.facts):
        assert set(s.accounts.ledger.budgets) == {"session", "turn"}
    assert set(s.accounts.ledger.budgets) == {"session"}
    with s.accounts.ledger.applied("off", s.facts):
        assert s.accounts.ledger.budgets == {}
    assert set(s.accounts.ledger.budgets) == {"session"}


def test_records_with_a_budget_restore_and_old_ones_still_do(server, tmp_path):
    from elelem_kernel.store.rebuild import _fits_schema, check, rebuild

    server.script("openai", Round(text="ok", usage=BIG))
    s = session(server, tmp_path)
    s.command("/budget 0.30")
    done, stopped = run(s, "one").record, run(s, "two").record
    for record in (done, stopped):
        record = json.loads(json.dumps(record))
        assert check(record) is None and _fits_schema()(record)  # no jsonschema import
    old = {k: v for k, v in done.items() if k != "budget"}
    bad = {**done, "turn": "t-bad", "budget": [{"amount": "lots"}]}
    rebuilt = rebuild([("a", [old]), ("b", [bad]), ("c", [stopped])])
    assert [r["turn"] for r in rebuilt.conversations[done["conversation"]]] == [
        done["turn"],
        stopped["turn"],
    ]
    assert "cell 2: malformed (budget/0" in rebuilt.warnings[0]
