"""The demo model counts and limits as a real model does, so budgets, the context meter
and compaction can be tried offline: its usage is the session's own estimate of the
request and of what it streamed, and it takes `max_tokens` and the sampling options.
"""

from __future__ import annotations

import asyncio

import pytest

from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.errors import ConfigError
from elelem_kernel.providers.demo import DemoProvider
from elelem_kernel.render.footer import footer_line
from tests.test_cli import cli, folder  # noqa: F401  (the command runner and its folder)


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    for name in ("ELELEM_BUDGET", "ELELEM_OPTIONS", "ELELEM_PROVIDER", "ELELEM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ELELEM_DEMO_DELAY", "0")


def turn(s, prompt):
    events: list[dict] = []
    result = asyncio.run(s.turn(prompt, renderer=events.append))
    return result, events


def test_the_meter_and_the_footer_count_the_same(tmp_path):
    (tmp_path / "README.md").write_text("# A project\n\nIt does things.\n")
    s = new_session("demo", workspace=tmp_path)
    result, events = turn(s, "what is in this folder?")
    assert result.stop == "end_turn" and result.record["rounds"][0]["calls"]
    meters = [e["context"]["used"] for e in events if e["type"] == "status"]
    assert len(meters) == len(result.record["rounds"]) >= 2
    assert result.record["usage"]["input"] == sum(meters)  # the live meter's figures
    assert result.record["usage"]["output"] > 0
    assert "usage_estimated" not in result.record  # the demo counted them itself
    assert result.record["context"]["estimated"] is False
    footer = footer_line(result.record)
    assert f"in {sum(meters):,} · out {result.record['usage']['output']:,}" in footer


def test_max_tokens_cuts_the_reply_as_a_model_does(tmp_path):
    s = new_session("demo", workspace=tmp_path, max_tokens=30, temperature=0.2, seed=1)
    result, _ = turn(s, "tell me about yourself")
    assert result.stop == "max_tokens"
    assert 0 < result.record["usage"]["output"] <= 30
    whole, _ = turn(new_session("demo", workspace=tmp_path), "tell me about yourself")
    assert len(result.reply) < len(whole.reply) and whole.reply.startswith(result.reply)


@pytest.mark.parametrize("value", ["lots", -3, "2k"])
def test_a_bad_max_tokens_is_refused(value):
    with pytest.raises(ConfigError, match="option max_tokens must be a number or off"):
        DemoProvider(max_tokens=value)
    with pytest.raises(ConfigError, match="Known options: delay, extra, max_tokens"):
        DemoProvider(top_k=3)


def test_a_token_budget_binds_offline(tmp_path):
    s = new_session("demo", workspace=tmp_path, max_tokens=200)
    first, _ = turn(s, "hello")
    spent = first.record["usage"]["input"] + first.record["usage"]["output"]
    assert spent > 0
    s.command(f"/budget {int(spent * 2.5)} tokens")
    stops = [turn(s, f"hello {n}")[0].stop for n in range(5)]
    assert "budget" in stops and stops.index("budget") <= 2


def test_the_review_script_reports_usage_too(tmp_path):
    events: list[dict] = []
    tools = [{"type": "function", "function": {"name": "report_finding", "parameters": {}}}]
    messages = [{"role": "user", "content": "review this"}]
    asyncio.run(DemoProvider(delay=0).fetch(messages, tools, events.append))
    (usage,) = [e for e in events if e["type"] == "usage"]
    assert usage["input"] > 0 and usage["output"] > 0
    assert events[-1]["type"] == "stop"


def test_the_command_line_takes_max_tokens_for_the_demo(folder):  # noqa: F811
    r = cli("ask", "-p", "demo", "-o", "max_tokens=20", "hi", cwd=folder, env={})
    assert r.returncode == 0, r.stderr
    assert "Known options" not in r.stderr and "max_tokens" in r.stderr.splitlines()[-1]
    assert "in 0 · out 0" not in r.stderr
