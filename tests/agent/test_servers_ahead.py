"""The windows of the model servers the environment names, asked before a turn
(assembly/servers_ahead.py) and taken by that turn; a real session over real HTTP
against the loopback wire server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from elelem_kernel.agent import registry
from elelem_kernel.assembly.servers_ahead import ask_windows
from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.providers import window_ahead
from tests.ports import free_port
from tests.wire_servers import Round, WireServer
from tests.wire_servers.local_servers import llama_cpp_info

ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OLLAMA_HOST",
    "ELELEM_PROVIDER",
    "ELELEM_MODEL",
    "ELELEM_OPTIONS",
    "ELELEM_CONTEXT_WINDOW",
    "ELELEM_POLICY",
)


@pytest.fixture
def wire(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WireServer]:
    """A llama.cpp-like server the environment points `openai` at; no other setting, no
    plugin, nothing asked ahead yet."""
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    window_ahead.forget()
    with WireServer() as server:
        server.info.update(llama_cpp_info("smollm2", n_ctx=8192))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url("openai"))
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("ELELEM_MODEL", "smollm2")
        yield server
    window_ahead.forget()


def first_turn(provider: str | None = None) -> dict:
    """A new session's first turn (with `-p provider`); its record."""
    session = new_session(namespace={})
    if provider is not None:
        session.facts.set_provider(provider, reuse=True)

    async def go():
        try:
            return await session.turn("hello", lambda event: None)
        finally:
            await session.facts.aclose()

    return asyncio.run(go()).record


def test_the_first_turn_takes_the_window_asked_ahead(wire):
    assert ask_windows() == 1
    asked = len(wire.info_requests)
    assert asked == 2  # /v1/models, /props

    wire.script("openai", Round(text="hi"))
    record = first_turn()
    assert record["context"]["window"] == 8192
    assert len(wire.info_requests) == asked  # the turn asked its server nothing first


def test_a_server_named_for_a_cells_provider_is_asked_too(wire, monkeypatch):
    """The default is the demo (a notebook whose cells say `-p openai`): the server
    OPENAI_BASE_URL names is asked, and the first `-p openai` turn takes its answer."""
    monkeypatch.setenv("ELELEM_PROVIDER", "demo")
    assert ask_windows() == 1
    asked = len(wire.info_requests)
    wire.script("openai", Round(text="hi"))
    assert first_turn("openai")["context"]["window"] == 8192
    assert len(wire.info_requests) == asked


def test_one_server_is_asked_once(wire):
    """`openai` and `responses` both follow OPENAI_BASE_URL: one question, the default's."""
    assert ask_windows() == 1
    assert [r.path for r in wire.info_requests] == ["/v1/models", "/props"]


@pytest.mark.parametrize(
    ("var", "value"),
    [("ELELEM_CONTEXT_WINDOW", "4096"), ("ELELEM_OPTIONS", "context_window=4096")],
)
def test_a_named_window_asks_nothing(wire, monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    assert ask_windows() == 0
    assert wire.info_requests == []


def test_official_endpoints_and_the_demo_ask_nothing(wire, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL")  # OpenAI's own: its models' windows are known
    assert ask_windows() == 0
    monkeypatch.delenv("OPENAI_API_KEY")  # nothing configured: the demo
    assert ask_windows() == 0
    assert wire.info_requests == []


def test_plugins_not_loaded_yet_leave_it_to_the_session(wire, home, tmp_path, monkeypatch):
    """A plugin may register or replace a provider: the session loads plugins at the first
    prompt, so nothing is chosen (or loaded) before it."""
    monkeypatch.setattr(registry, "_plugins_loaded", set())
    marker = tmp_path / "marker"
    folder = home / ".agents" / "plugins"
    folder.mkdir(parents=True)
    (folder / "mine.py").write_text(f"open({str(marker)!r}, 'a').write('loaded')\n")
    assert registry.plugins_waiting()
    assert ask_windows() == 0
    assert wire.info_requests == []
    assert not marker.exists()


def test_a_bad_setting_is_the_turns_to_report(wire, monkeypatch):
    monkeypatch.setenv("ELELEM_PROVIDER", "no-such-provider")
    assert ask_windows() == 1  # OPENAI_BASE_URL's server, still
    monkeypatch.setenv("OPENAI_BASE_URL", "not a url")
    assert ask_windows() == 0


def test_a_server_not_started_yet_is_asked_by_the_turn(wire, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    assert ask_windows() == 0
    monkeypatch.setenv("OPENAI_BASE_URL", wire.base_url("openai"))  # started meanwhile
    wire.script("openai", Round(text="hi"))
    assert first_turn()["context"]["window"] == 8192
    assert len(wire.info_requests) == 2
