"""The smaller things a person running a local model meets on every path: what `--json`,
`/context`, `/usage` and the footer say, keys a local server does not need, options it
does, and calibration kept from one run to the next; real sessions over real HTTP against
loopback servers shaped like llama.cpp's."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator

import pytest

from elelem_kernel.agent.session import Session
from elelem_kernel.errors import ConfigError
from elelem_kernel.providers.anthropic import AnthropicProvider
from elelem_kernel.providers.openai import OpenAIProvider
from elelem_kernel.render.footer import footer_line
from elelem_kernel.render.terminal_view import JsonRenderer, TerminalRenderer
from tests.ports import free_port
from tests.wire_servers import Round, WireServer
from tests.wire_servers.local_servers import llama_cpp_info


@pytest.fixture
def wire(monkeypatch) -> Iterator[WireServer]:
    for var in (
        "ELELEM_CONTEXT_WINDOW",
        "ELELEM_OPTIONS",
        "ELELEM_MODEL",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    with WireServer() as server:
        yield server


def local(server: WireServer) -> Session:
    provider = OpenAIProvider(base_url=server.base_url("openai"), backoff=0.001)
    return Session(provider, provider_name="openai")


def turn(s: Session, prompt: str, renderer=None):
    return asyncio.run(s.turn(prompt, renderer=renderer))


def test_json_prints_the_compactions(wire):
    wire.script("openai", Round(text="one"), Round(text="two"))
    s = local(wire)
    turn(s, "FACT-1 " + "x" * 3_500)
    turn(s, "FACT-2 " + "x" * 3_500)
    s.command("/compact")
    wire.script("openai", Round(text="SUMMARY of FACT-1"), Round(text="three"))
    out = io.StringIO()
    turn(s, "third", JsonRenderer(out))
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    compactions = [e for e in events if e["type"] == "compaction"]
    assert len(compactions) == 1 and compactions[0]["summary"] == "SUMMARY of FACT-1"
    assert compactions[0]["turns"] == 1


def test_context_before_the_first_request_asks_the_server(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=4096))
    answer = local(wire).command("/context")
    assert "Window: 4.1k tokens (reported by the openai server)" in answer
    assert "does not say" not in answer
    assert "You are elelem, a coding and data agent in Jupyter" in answer  # the brief one


def test_the_footer_names_a_model_served_from_a_file_by_its_short_name(wire):
    wire.script("openai", Round(text="hi", model="/home/me/models/SmolLM2-135M-Q8_0.gguf"))
    result = turn(local(wire), "hello")
    line = footer_line(result.record)
    assert "openai/SmolLM2-135M-Q8_0 ·" in line and "//" not in line


def test_usage_counts_one_turn_in_the_singular(wire):
    wire.script("openai", Round(text="hi"))
    s = local(wire)
    turn(s, "hello")
    assert s.command("/usage").startswith("1 turn, ")


def test_a_connection_failure_is_not_a_round(wire):
    provider = OpenAIProvider(
        base_url=f"http://127.0.0.1:{free_port()}/v1", backoff=0.001, retries=0
    )
    err = io.StringIO()
    renderer = TerminalRenderer(io.StringIO(), err, color=False)
    result = turn(Session(provider, provider_name="openai"), "hello", renderer)
    assert result.stop == "error" and result.record["rounds"] == []
    assert "cannot connect" in err.getvalue().lower() or "Error:" in err.getvalue()
    assert "1 round" not in err.getvalue()


def test_anthropic_at_a_local_base_url_needs_no_key(wire):
    wire.script("anthropic", Round(text="hi from a local server"))
    provider = AnthropicProvider(base_url=wire.base_url("anthropic"), backoff=0.001)
    result = turn(Session(provider, provider_name="anthropic"), "hello")
    assert result.stop == "end_turn" and result.reply == "hi from a local server"
    assert "x-api-key" not in {k for k, v in wire.requests[-1].headers.items() if v}
    official = turn(Session(AnthropicProvider(), provider_name="anthropic"), "hello")
    assert "needs an API key: set ANTHROPIC_API_KEY" in (official.error or "")


def test_a_sampling_option_openai_does_not_name_points_at_extra(wire):
    with pytest.raises(ConfigError) as error:
        OpenAIProvider(base_url=wire.base_url("openai"), top_k=5)
    assert """-o extra='{"top_k": 5}'""" in str(error.value)


def test_the_calibration_is_kept_in_the_record_and_restored_with_the_conversation(wire):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=200_000))
    s = local(wire)
    wire.script("openai", Round(text="one", usage={"input": 1}))
    turn(s, "a")
    wire.script("openai", Round(text="two", usage={"input": s.facts._raw * 2}))
    second = turn(s, "b")
    factor = s.facts.calibration[s.conversation.id]
    assert factor > 1.5 and second.record["calibration"] == pytest.approx(factor, abs=1e-3)

    again = local(wire)  # the next `ask --notebook` run: a new session, the records restored
    records = json.loads(json.dumps(s.conversation.turns))
    again.load({s.conversation.id: records}, s.conversation.id)
    assert again.facts.calibration[s.conversation.id] == pytest.approx(factor, abs=1e-3)


def test_a_llama_server_whose_template_drops_tools_is_named_once(wire):
    info = llama_cpp_info("smollm2", n_ctx=8192)
    info["/props"]["chat_template_caps"] = {"supports_tools": False, "supports_system_role": True}
    wire.info.update(info)
    wire.script("openai", Round(text="one"), Round(text="two"))
    s = local(wire)
    first, second = turn(s, "a"), turn(s, "b")
    notes = [n for n in first.notices if "--jinja" in n]
    assert len(notes) == 1 and "--chat-template-file" in notes[0]
    assert not any("--jinja" in n for n in second.notices)


def test_a_llama_server_whose_template_takes_tools_says_nothing(wire):
    info = llama_cpp_info("smollm2", n_ctx=8192)
    info["/props"]["chat_template_caps"] = {"supports_tools": True}
    wire.info.update(info)
    wire.script("openai", Round(text="one"))
    assert turn(local(wire), "a").notices == []
