"""Provider options from where people type: `-o NAME=VALUE`, `/option`, ELELEM_OPTIONS."""

from __future__ import annotations

import pytest

from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.errors import ConfigError
from elelem_kernel.options import describe, from_env, parse_pair, parse_pairs, parse_value


@pytest.fixture(autouse=True)
def no_env_options(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("ELELEM_OPTIONS", raising=False)
    monkeypatch.delenv("ELELEM_MODEL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


def test_values_are_json_when_they_parse_else_text():
    assert parse_value("2000") == 2000
    assert parse_value("0.2") == 0.2
    assert parse_value("true") is True
    assert parse_value('["a", "b"]') == ["a", "b"]
    assert parse_value("high") == "high"
    assert parse_value(" 1,5 ") == "1,5"
    assert parse_pair("thinking=high") == ("thinking", "high")
    assert parse_pair("stop==") == ("stop", "=")
    assert parse_pairs(["a=1", "b=x", "a=2"]) == {"a": 2, "b": "x"}


def test_bad_pairs_say_how_to_write_them():
    with pytest.raises(ConfigError, match="NAME=VALUE"):
        parse_pair("max_tokens")
    with pytest.raises(ConfigError, match="bad option name"):
        parse_pair("max tokens=3")


def test_env_options_split_at_names_so_json_lists_survive():
    env = {"ELELEM_OPTIONS": 'max_tokens=4096, stop=["a","b"],thinking=off'}
    assert from_env(env) == {"max_tokens": 4096, "stop": ["a", "b"], "thinking": "off"}
    assert from_env({}) == {}
    with pytest.raises(ConfigError, match="ELELEM_OPTIONS"):
        from_env({"ELELEM_OPTIONS": "nonsense"})


def test_keys_are_hidden_when_options_are_shown():
    assert describe({"api_key": "sk-secret", "max_tokens": 5}) == "api_key=***, max_tokens=5"


def test_env_options_reach_the_provider_and_explicit_ones_win(monkeypatch):
    monkeypatch.setenv("ELELEM_OPTIONS", "max_tokens=4096,read_timeout=30")
    session = new_session(provider="openai", max_tokens=100)
    assert session.provider.options["max_tokens"] == 100
    assert session.provider.read_timeout == 30


def test_an_unknown_env_option_names_its_source_and_the_known_ones(monkeypatch):
    monkeypatch.setenv("ELELEM_OPTIONS", "top_k=40")  # the demo takes max_tokens (issue 42)
    with pytest.raises(ConfigError) as error:
        new_session(provider="demo")
    message = str(error.value)
    assert "unknown option for demo: top_k" in message
    assert "Known options: delay" in message and "ELELEM_OPTIONS" in message


def test_option_command_sets_shows_and_unsets():
    session = new_session(provider="openai", base_url="http://127.0.0.1:9/v1")
    answer = session.command("/option max_tokens 300")
    assert "max_tokens=300" in answer and "known: api_key, backoff" in answer
    assert session.provider.options["max_tokens"] == 300
    assert session.provider.base_url == "http://127.0.0.1:9/v1"  # earlier options stay
    session.command("/option thinking high")
    assert session.provider.options["thinking"] == "high"
    session.command("/option max_tokens")
    assert session.provider.options["max_tokens"] is None
    assert session.facts.options == {"base_url": "http://127.0.0.1:9/v1", "thinking": "high"}


def test_an_unknown_option_is_refused_and_nothing_changes():
    session = new_session(provider="openai", base_url="http://127.0.0.1:9/v1")
    before = session.provider
    answer = session.command("/option tempreature 0.2")
    assert "unknown option for openai: tempreature" in answer
    assert "Known options: api_key, backoff, base_url, extra, max_event_bytes, max_tokens" in answer
    assert session.provider is before and "tempreature" not in session.facts.options


def test_options_stay_with_their_provider_across_switches():
    session = new_session(provider="openai", base_url="http://127.0.0.1:9/v1")
    session.command("/option max_tokens 300")
    session.command("/model gpt-x")
    assert session.provider.options["max_tokens"] == 300 and session.model == "gpt-x"
    session.command("/provider demo")  # demo knows none of openai's options
    assert session.provider_name == "demo" and session.facts.options == {}
    session.command("/provider openai")
    assert session.provider.options["max_tokens"] == 300
