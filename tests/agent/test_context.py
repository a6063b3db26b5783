"""The context window: where its size comes from, and the meter of each turn."""

from __future__ import annotations

import asyncio

import pytest

from elelem_kernel.agent.context import (
    estimate,
    known_window,
    parse_window,
    resolve_window,
)
from elelem_kernel.agent.session import Session
from elelem_kernel.assembly.bundled import catalog
from elelem_kernel.errors import ConfigError
from elelem_kernel.events import Provider
from elelem_kernel.render.footer import footer_text, meter
from elelem_kernel.render.static import bundle
from elelem_kernel.tokens import DIGIT_CHARS, TEXT_CHARS
from tests.scripted import Scripted, say


def create(name, model, chosen):
    """A provider made by the registry with the built-ins in it, as sessions make them."""
    return catalog().create_with_env(name, model, chosen)


@pytest.mark.parametrize(
    ("text", "tokens"), [(6000, 6000), ("6000", 6000), ("200k", 200_000), ("1.5M", 1_500_000)]
)
def test_window_sizes_parse(text, tokens):
    assert parse_window(text) == tokens


@pytest.mark.parametrize("bad", ["lots", "12", True, "-5000", ""])
def test_bad_window_sizes_are_refused(bad):
    with pytest.raises(ConfigError):
        parse_window(bad)


def test_known_windows_by_model_then_provider():
    assert known_window("anthropic", "claude-sonnet-4-5") == 200_000
    assert known_window("openai", "gpt-4o-mini") == 128_000
    assert known_window("openai", "gpt-4.1-mini") == 1_047_576
    assert known_window("ollama", "some-local-model") == 40_960
    assert known_window("plugin", "unknown") == 128_000


def test_the_window_comes_from_the_first_source_that_names_one():
    base = {"provider_name": "openai", "model": "gpt-4o", "environ": {}}
    assert resolve_window(override=None, options={}, **base) == (128_000, "known for this model")
    assert resolve_window(override=None, options={}, reported=8192, **base)[0] == 8192
    env = {**base, "environ": {"ELELEM_CONTEXT_WINDOW": "32k"}}
    assert resolve_window(override=None, options={}, reported=8192, **env)[0] == 32_000
    opts = {"context_window": 16000}
    assert resolve_window(override=None, options=opts, **env)[0] == 16_000
    assert resolve_window(override=7000, options=opts, **env) == (7000, "/context-window")


def test_the_context_window_option_is_the_sessions_not_the_providers(monkeypatch):
    monkeypatch.delenv("ELELEM_OPTIONS", raising=False)
    provider = create("echo", None, {"context_window": "6k"})  # echo knows no options
    s = Session(provider, provider_name="echo")
    s.facts.provider_options["echo"] = {"context_window": "6k"}
    assert s.facts.window() == (6000, "the option context_window")
    with pytest.raises(ConfigError, match="bad context window"):
        create("echo", None, {"context_window": "huge"})
    monkeypatch.setenv("ELELEM_OPTIONS", "context_window=9000")
    assert Session(create("echo", None, {}), provider_name="echo").facts.window()[0] == 9000


def test_context_window_command_sets_shows_and_resets(monkeypatch):
    monkeypatch.delenv("ELELEM_CONTEXT_WINDOW", raising=False)
    monkeypatch.delenv("ELELEM_OPTIONS", raising=False)
    s = Session(Scripted(), provider_name="anthropic", model="claude-sonnet-4")
    assert s.command("/context-window 6000").startswith("Window: 6.0k tokens (/context-window)")
    assert s.facts.context_window == 6000
    assert "past 80%" in s.command("/context")
    assert "Usage" in s.command("/context-window lots")
    assert s.command("/context-window off").startswith("Window: 200k tokens (known")


def test_the_meter_shows_the_input_tokens_the_provider_reported_for_the_last_request():
    rounds = [
        [
            {"type": "doing", "id": "a", "name": "nope", "arguments": {}},
            {"type": "usage", "input": 900, "output": 5},
            {"type": "stop", "reason": "tool_use"},
        ],
        [
            {"type": "saying", "text": "done"},
            {"type": "usage", "input": 1_234, "output": 5},
            {"type": "stop", "reason": "end_turn"},
        ],
    ]
    s = Session(Scripted(*rounds), provider_name="scripted")
    s.facts.context_window = 6000
    events: list = []
    result = asyncio.run(s.turn("hi", renderer=events.append))
    assert result.record["context"] == {"used": 1_234, "window": 6000, "estimated": False}
    assert events[-1]["context"] == result.record["context"]
    assert "ctx 1.2k/6.0k" in bundle(result.record)[0]["text/plain"]


def test_before_any_report_the_meter_is_the_estimate_of_the_request_sent():
    provider = Scripted(say("ok"))
    s = Session(provider, provider_name="scripted")
    result = asyncio.run(s.turn("hello"))
    sent = provider.sent[0]
    assert result.record["context"]["used"] == estimate(sent["messages"], sent["tools"])
    assert result.record["context"]["estimated"] is True
    assert meter(result.record["context"]).startswith("ctx ~")


def test_a_turn_that_sent_nothing_has_no_meter():
    s = Session(Scripted(), provider_name="scripted")
    assert "context" not in asyncio.run(s.turn("   ")).record


def test_footer_text_places_the_meter_after_the_tokens():
    line = footer_text(
        {"input": 5, "output": 1},
        10,
        1,
        "end_turn",
        context={"used": 41_000, "window": 200_000, "estimated": False},
    )
    assert line.startswith("in 5 · out 1 · ctx 41k/200k · 10 ms")
    assert "ctx" not in footer_text({}, 10, 1, "end_turn", context={"used": "x"})


class Probed(Provider):
    """A provider that reports its own window, as Ollama does."""

    def __init__(self):
        self.asked = 0
        self.model = "probed"

    async def context_window(self):
        self.asked += 1
        return 5_000

    async def fetch(self, messages, tools, emit):
        emit({"type": "saying", "text": "ok"})
        emit({"type": "stop", "reason": "end_turn"})


def test_a_provider_is_asked_for_its_window_once_before_the_first_request(monkeypatch):
    monkeypatch.delenv("ELELEM_CONTEXT_WINDOW", raising=False)
    monkeypatch.delenv("ELELEM_OPTIONS", raising=False)
    provider = Probed()
    s = Session(provider, provider_name="probed")
    assert s.facts.window()[0] == 128_000
    first = asyncio.run(s.turn("small"))
    asyncio.run(s.turn("more"))
    assert provider.asked == 1 and s.facts.window() == (5_000, "reported by the probed server")
    assert first.record["context"]["window"] == 5_000


def test_the_estimate_counts_ascii_digits_and_wide_characters_as_before():
    """Prose at TEXT_CHARS a token, ASCII digits at DIGIT_CHARS, anything outside ASCII
    one each (other scripts' digits too), rounded up."""
    message = {"content": "ab 12345 é२"}
    text = '{"content": "ab 12345 é२"}'
    digits, wide = 5, 2
    expected = (len(text) - digits - wide) / TEXT_CHARS + digits / DIGIT_CHARS + wide
    assert estimate([message]) == int(-(-expected // 1))
