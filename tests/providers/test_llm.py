"""The llm provider with real llm plugins: llm-echo's `echo` model, llm's own OpenAI models
talking to the loopback wire server, and a small sync-only plugin registered through
llm's plugin manager (for the worker thread and interrupts). LLM_USER_PATH is a temp
folder in every test, so the person's llm keys, aliases and logs are never touched."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import types
from pathlib import Path

import pytest

pytest.importorskip("llm")
pytest.importorskip("llm_echo")

from elelem_kernel.assembly.bundled import catalog  # noqa: E402
from elelem_kernel.assembly.sessions import new_session  # noqa: E402
from elelem_kernel.errors import ConfigError  # noqa: E402
from elelem_kernel.providers.llm import LLMProvider, about, request  # noqa: E402
from tests.providers.conftest import PROMPT, TOOLS, fetch  # noqa: E402
from tests.wire_servers import Round  # noqa: E402


def create_provider(name, model=None, **options):
    """A provider made by the registry with the built-ins in it, as sessions make them."""
    return catalog().create_provider(name, model, **options)


THINKING = "First I consider the prompt, then I decide what to say."


@pytest.fixture(autouse=True)
def llm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "llm-home"
    home.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(home))
    monkeypatch.delenv("ELELEM_OPTIONS", raising=False)
    monkeypatch.delenv("LLM_ECHO_NEEDS_KEY_KEY", raising=False)
    return home


def echo_calls(*calls: tuple[str, dict], prompt: str = "look") -> str:
    """A prompt that makes llm-echo call tools."""
    return json.dumps(
        {"prompt": prompt, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}
    )


def test_plain_turn_streams_text_usage_and_stop():
    got = fetch(LLMProvider(model="echo"))
    assert got.error is None
    reply = json.loads(got.text)
    assert reply["prompt"] == "Hi" and reply["system"] == "Be brief."
    assert reply["stream"] is True
    # llm-echo counts words: "Hi" + "Be brief." in, its JSON reply out.
    assert got.of("usage") == [{"type": "usage", "input": 3, "output": len(got.text.split())}]
    assert got.of("stop") == [{"type": "stop", "reason": "end_turn", "truncated": False}]
    assert got.of("doing") == [] and got.of("thinking") == []


def test_the_async_model_is_preferred():
    assert LLMProvider(model="echo").is_async


def test_thinking_option_streams_reasoning_and_keeps_it_for_the_next_round():
    provider = create_provider("llm", model="echo", thinking=True)
    got = fetch(provider)
    assert got.thinking == THINKING
    assert json.loads(got.text)["prompt"] == "Hi"
    assistant = got.assistant()
    [block] = assistant["thinking"]
    assert block["text"] == THINKING
    saved = block["metadata"]["llm"]["messages"]
    assert saved[0]["parts"][0] == {"type": "reasoning", "text": THINKING}
    # The next round sends the reasoning part back as llm assembled it.
    follow = [*PROMPT, assistant, {"role": "user", "content": "and?"}]
    import llm

    kwargs = request(llm, provider.llm_model, follow, [], {})
    sent = [m.to_dict() for m in kwargs["messages"]]
    assert sent[-1]["parts"][0] == {"type": "reasoning", "text": THINKING}
    assert kwargs["prompt"] == "and?"


def test_tool_round_trip_through_a_session(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    session = new_session(provider="llm", model="echo", workspace=tmp_path)
    result = session.run(echo_calls(("read", {"path": "notes.txt"})))
    assert result.stop == "end_turn", result.error
    first, second = result.record["rounds"]
    [call] = first["calls"]
    assert call["name"] == "read" and call["ok"] is True
    assert call["id"].startswith("tc_")
    # Round two: llm-echo got the result as llm's tool_results, under the call's id.
    [tool_result] = json.loads(second["text"])["tool_results"]
    assert tool_result["name"] == "read"
    assert tool_result["tool_call_id"] == call["id"]
    assert "the answer is 42" in tool_result["output"]
    assert result.usage["input"] > 0 and result.usage["output"] > 0


def test_options_are_checked_by_the_models_options_class():
    with pytest.raises(ConfigError) as unknown:
        LLMProvider(model="echo", temprature=0.2)
    message = str(unknown.value)
    assert "temprature" in message and "example_bool" in message and "thinking" in message
    with pytest.raises(ConfigError, match="bad option for llm model echo: thinking"):
        LLMProvider(model="echo", thinking="very")


def test_unknown_model_names_the_id_and_llm_models():
    with pytest.raises(ConfigError) as error:
        create_provider("llm", model="no-such-model-xyz")
    assert '"no-such-model-xyz"' in str(error.value)
    assert "llm models" in str(error.value)


def test_llm_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "llm", None)
    with pytest.raises(ConfigError, match=r"elelem-kernel\[llm\]"):
        create_provider("llm", model="echo")
    assert about() == "not installed: pip install 'elelem-kernel[llm]'"


def test_missing_key_says_how_to_set_it():
    got = fetch(LLMProvider(model="echo-needs-key"))
    assert isinstance(got.error, ConfigError)
    assert "llm keys set echo-needs-key" in str(got.error)
    assert "LLM_ECHO_NEEDS_KEY_KEY" in str(got.error)


def test_nothing_is_logged_unless_the_log_option_is_on(llm_home: Path):
    assert fetch(LLMProvider(model="echo")).error is None
    assert not (llm_home / "logs.db").exists()
    assert fetch(LLMProvider(model="echo", log="true")).error is None
    import sqlite_utils

    db = sqlite_utils.Database(llm_home / "logs.db")
    assert any(db[t].count for t in db.table_names())


def test_providers_command_counts_llms_models(capsys: pytest.CaptureFixture[str]):
    from elelem_kernel.cli import main

    assert main(["providers"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("llm"))
    assert "models from llm's plugins" in line
    count = int(line.split()[1])
    assert count >= 2  # echo and echo-needs-key, plus llm's OpenAI models


# -- llm's own OpenAI models against the loopback wire server -------------------------


@pytest.fixture
def wire_model(wire, llm_home: Path) -> str:
    (llm_home / "extra-openai-models.yaml").write_text(
        "- model_id: wire-gpt\n"
        "  model_name: gpt-wire\n"
        f"  api_base: {wire.base_url('openai')}\n"
        "  supports_tools: true\n"
    )
    return "wire-gpt"


def test_openai_model_streams_and_round_trips_a_tool_call(wire, wire_model):
    wire.script(
        "openai",
        Round(
            text="Let me look.",
            calls=[("read", {"path": "a.py"}, "call_1")],
            usage={"cache_read": 5},
        ),
        Round(text="It is empty."),
    )
    provider = LLMProvider(model=wire_model)
    one = fetch(provider)
    assert one.error is None
    assert one.text == "Let me look."
    assert [(e["id"], e["name"], e["arguments"]) for e in one.of("doing")] == [
        ("call_1", "read", {"path": "a.py"})
    ]
    assert one.of("usage") == [{"type": "usage", "input": 12, "output": 7, "cache_read": 5}]
    assert one.of("stop") == [{"type": "stop", "reason": "tool_calls", "truncated": False}]
    first = wire.requests[0].body
    assert first["model"] == "gpt-wire" and first["stream"] is True
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert first["tools"][0]["function"]["name"] == "read"

    assistant = one.assistant()
    follow = [
        *PROMPT,
        assistant,
        {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'},
    ]
    two = fetch(provider, follow)
    assert two.error is None and two.text == "It is empty."
    sent = wire.requests[1].body["messages"]
    assert sent[2]["role"] == "assistant"
    assert sent[2]["tool_calls"][0]["id"] == "call_1"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"path": "a.py"}
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true}'}


def test_openai_model_cut_off_is_max_tokens(wire, wire_model):
    wire.script("openai", Round(text="Once upon", stop="length"))
    got = fetch(LLMProvider(model=wire_model), tools=TOOLS)
    assert got.of("stop") == [{"type": "stop", "reason": "length", "truncated": True}]


def test_model_options_reach_the_request(wire, wire_model):
    wire.script("openai", Round(text="ok"))
    assert fetch(LLMProvider(model=wire_model, temperature=0.2, max_tokens=50)).error is None
    body = wire.requests[0].body
    assert body["temperature"] == 0.2 and body["max_tokens"] == 50


# -- a sync-only model: the worker thread and interrupts ------------------------------


class Gate:
    """What the sync test model waits on."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.blocked = threading.Event()


@contextlib.contextmanager
def plugin_with(*models):
    """`models` registered as an llm plugin through llm's own plugin manager."""
    import llm
    from llm.plugins import pm

    plugin = types.ModuleType("elelem_test_llm_plugin")

    @llm.hookimpl
    def register_models(register):
        for model in models:
            register(model)

    plugin.register_models = register_models
    pm.register(plugin, name="elelem-test-plugin")
    try:
        yield
    finally:
        pm.unregister(name="elelem-test-plugin")


@pytest.fixture
def slow_model():
    """A sync-only llm model `slow-sync` that yields "first words " and then blocks until
    the test opens the gate."""
    import llm

    gate = Gate()

    class SlowSync(llm.Model):
        model_id = "slow-sync"
        can_stream = True

        def execute(self, prompt, stream, response, conversation=None):
            yield "first words "
            gate.blocked.set()
            gate.open.wait(30)
            yield "and the rest"
            response.set_usage(input=2, output=5)

    with plugin_with(SlowSync()):
        try:
            yield gate
        finally:
            gate.open.set()


def test_a_sync_model_runs_in_a_thread(slow_model: Gate):
    provider = LLMProvider(model="slow-sync")
    assert not provider.is_async
    slow_model.open.set()
    got = fetch(provider)
    assert got.error is None
    assert got.text == "first words and the rest"
    assert got.of("usage") == [{"type": "usage", "input": 2, "output": 5}]


def test_interrupting_a_sync_model_ends_the_turn_while_its_thread_still_waits(
    slow_model: Gate, tmp_path: Path
):
    session = new_session(provider="llm", model="slow-sync", workspace=tmp_path)

    async def go():
        seen = asyncio.Event()
        ticks = 0

        def renderer(event: dict) -> None:
            if event.get("type") == "block_delta":
                seen.set()

        async def ticker() -> None:  # the loop stays free while the model's thread blocks
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        clock = asyncio.ensure_future(ticker())
        turn = asyncio.ensure_future(session.turn("hello", renderer=renderer))
        await seen.wait()
        await asyncio.to_thread(slow_model.blocked.wait, 30)
        before = ticks
        while ticks < before + 3:
            await asyncio.sleep(0.01)
        turn.cancel()
        result = await turn
        clock.cancel()
        return result

    result = asyncio.run(go())
    assert result.stop == "interrupted"
    assert result.reply == "first words "
    assert not slow_model.open.is_set()  # the turn did not wait for the blocked thread


def test_provider_metadata_goes_back_to_the_plugin_and_never_into_the_record(tmp_path: Path):
    import llm
    from llm.parts import StreamEvent

    seen: list[list[dict]] = []

    class Signed(llm.AsyncModel):
        model_id = "signed"
        can_stream = True
        supports_tools = True

        async def execute(self, prompt, stream, response, conversation=None):
            seen.append([m.to_dict() for m in prompt.messages])
            if prompt.tool_results:
                yield "done"
                return
            meta = {"signature": "opaque-sig-123"}
            yield StreamEvent(type="reasoning", chunk="Check the file.", provider_metadata=meta)
            yield StreamEvent(type="tool_call_name", chunk="read", tool_call_id="t1")
            yield StreamEvent(type="tool_call_args", chunk='{"path": "a.txt"}', tool_call_id="t1")

    (tmp_path / "a.txt").write_text("alpha\n")
    with plugin_with(Signed()):
        session = new_session(provider="llm", model="signed", workspace=tmp_path)
        result = session.run("read a.txt")
    assert result.stop == "end_turn" and result.reply == "done", result.error
    *_, assistant, tool = seen[1]
    assert assistant["parts"] == [
        {
            "type": "reasoning",
            "text": "Check the file.",
            "provider_metadata": {"signature": "opaque-sig-123"},
        },
        {"type": "tool_call", "name": "read", "arguments": {"path": "a.txt"}, "tool_call_id": "t1"},
    ]
    [sent] = tool["parts"]
    assert sent["tool_call_id"] == "t1" and sent["name"] == "read" and "alpha" in sent["output"]
    assert result.record["rounds"][0]["thinking"] == "Check the file."
    assert "opaque-sig-123" not in json.dumps(result.record)


def test_images_become_attachments_of_the_tool_result_where_the_model_takes_them():
    import llm

    from elelem_kernel.providers.llm import request
    from tests.pictures import png, png64

    provider = LLMProvider(model="echo")
    assert provider.takes_images() is True  # llm-echo's attachment_types has image/png
    webp = {"mime_type": "image/webp", "data": png64()}
    messages = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "name": "read"}]},
        {
            "role": "tool",
            "tool_call_id": "t1",
            "content": '{"ok": true}',
            "images": [{"mime_type": "image/png", "data": png64(9, 9)}, webp],
        },
    ]
    kwargs = request(llm, provider.llm_model, messages, [], {})
    [result] = kwargs["tool_results"]
    [attachment] = result.attachments
    assert attachment.type == "image/png" and attachment.content == png(9, 9)
    assert result.output == '{"ok": true}\n[image: image/webp, a type this model does not take]'


# -- a local server behind llm's OpenAI-compatible models (api_base) -------------------


def test_a_local_api_base_is_asked_for_its_window_and_is_not_priced(wire, wire_model):
    from elelem_kernel.agent.session import Session
    from tests.wire_servers.local_servers import llama_cpp_info

    wire.info.update(llama_cpp_info("gpt-wire", n_ctx=4096))
    wire.script("openai", Round(text="hi"))
    s = Session(LLMProvider(model=wire_model), provider_name="llm")
    result = s.run("hello")
    assert result.stop == "end_turn" and result.record["context"]["window"] == 4096
    assert s.facts.window() == (4096, "reported by the llm server")
    assert result.cost is None  # a model name at a local server says nothing of its price


def test_a_local_servers_overflow_through_llm_compacts_and_retries(wire, wire_model):
    from elelem_kernel.agent.session import Session
    from tests.wire_servers.local_servers import overflow_reply

    s = Session(LLMProvider(model=wire_model), provider_name="llm")
    s.facts.context_window = None
    for n in (1, 2):
        wire.script("openai", Round(text=f"reply {n}"))
        s.run(f"FACT-{n} " + "x" * 3_500)
    wire.queue(overflow_reply("llama.cpp", requested=24075, limit=8192))
    wire.script("openai", Round(text="SUMMARY of FACT-1"), Round(text="three"))
    third = s.run("third")
    assert third.stop == "end_turn" and third.reply == "three", third.error
    assert any("24,075 tokens" in n and "8,192" in n for n in third.notices)
    assert "failed" not in third.record["compaction"]
    assert s.facts.window() == (8192, "stated by the server when it refused a request")
