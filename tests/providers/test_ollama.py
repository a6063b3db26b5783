"""OllamaProvider over real loopback HTTP: NDJSON, whole calls with object arguments,
made-up ids, thinking and tool names sent back, OLLAMA_HOST forms, actionable errors."""

from __future__ import annotations

import pytest

from elelem_kernel.providers.ollama import OllamaProvider, host_url
from tests.providers.conftest import PROMPT, TOOLS, fetch, results
from tests.wire_servers import Round, error_reply, ndjson_line, stream_reply


def test_request_goes_to_api_chat_with_tools_and_options(wire, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", wire.url)
    wire.script("ollama", Round(text="Hi."))
    fetch(OllamaProvider("llama3.2", thinking="on", max_tokens=64, num_ctx=8192))
    request = wire.requests[0]
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert "authorization" not in request.headers
    assert request.body == {
        "model": "llama3.2",
        "messages": PROMPT,
        "tools": TOOLS,
        "think": True,
        "options": {"num_predict": 64, "num_ctx": 8192},
        "stream": True,
    }


def test_second_round_sends_thinking_calls_and_named_results(wire, make):
    first = Round(thinking="Read it.", calls=[("read", {"path": "a.py"}), ("list", {})], ids=False)
    wire.script("ollama", first, Round(text="Done."))
    provider = make("ollama")
    one = fetch(provider)
    ids = [e["id"] for e in one.of("doing")]
    assert len(set(ids)) == 2 and all(ids)
    assert one.calls == [("read", {"path": "a.py"}), ("list", {})]
    assistant = one.assistant()
    two = fetch(provider, [*PROMPT, assistant, *results(assistant, '{"ok": true}', "[]")])
    assert two.text == "Done."
    assert wire.requests[1].body["messages"][2:] == [
        {
            "role": "assistant",
            "content": "",
            "thinking": "Read it.",
            "tool_calls": [
                {"id": ids[0], "function": {"index": 0, "name": "read",
                                            "arguments": {"path": "a.py"}}},
                {"id": ids[1], "function": {"index": 1, "name": "list", "arguments": {}}},
            ],
        },
        {"role": "tool", "tool_name": "read", "tool_call_id": ids[0], "content": '{"ok": true}'},
        {"role": "tool", "tool_name": "list", "tool_call_id": ids[1], "content": "[]"},
    ]  # fmt: skip


def test_server_ids_are_kept_and_string_arguments_parsed(wire, make):
    line = {"message": {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_srv", "function": {"name": "read", "arguments": '{"path": "b"}'}}]},
        "done": False}  # fmt: skip
    done = {"message": {"role": "assistant", "content": ""}, "done": True}
    wire.queue(stream_reply("ollama", [ndjson_line(line), ndjson_line(done)]))
    got = fetch(make("ollama"))
    assert [(e["id"], e["arguments"]) for e in got.of("doing")] == [("call_srv", {"path": "b"})]
    assert got.of("usage") == [{"type": "usage", "input": 0, "output": 0}]
    assert got.of("stop") == [{"type": "stop", "reason": "stop", "truncated": False}]


def test_a_missing_model_says_how_to_pull_it(wire, make):
    wire.queue(error_reply("ollama", 404, 'model "qwen3" not found, try pulling it first'))
    got = fetch(make("ollama"))
    assert str(got.error) == (
        "404 from ollama: model \"qwen3\" not found, try pulling it first (model 'qwen3'); "
        "run `ollama pull qwen3`"
    )


@pytest.mark.parametrize(
    "host, url",
    [
        (None, "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("localhost:9999", "http://localhost:9999"),
        ("http://gpu-box:11434/", "http://gpu-box:11434"),
        ("https://ollama.example.com", "https://ollama.example.com:443"),
    ],
)
def test_ollama_host_forms(host, url):
    assert host_url(host) == url


def test_thinking_levels_pass_through():
    assert OllamaProvider(thinking="high").body(PROMPT, [])["think"] == "high"
    assert OllamaProvider(thinking="off").body(PROMPT, [])["think"] is False
    assert "think" not in OllamaProvider().body(PROMPT, [])


def _show(body: dict):
    import json

    from tests.wire_servers import Reply

    return Reply(
        200, {"content-type": "application/json"}, [json.dumps(body).encode()], stream=False
    )


def test_the_window_comes_from_api_show(wire, monkeypatch):
    import asyncio

    monkeypatch.setenv("OLLAMA_HOST", wire.url)
    provider = OllamaProvider("qwen3")
    answers = [
        ({"parameters": "stop <end>\nnum_ctx 8192", "model_info": {}}, 8192),
        ({"model_info": {"qwen3.context_length": 40960, "qwen3.block_count": 36}}, 40960),
        ({"license": "..."}, None),
    ]
    for answer, window in answers:
        wire.info["/api/show"] = _show(answer)
        assert asyncio.run(provider.context_window()) == window
    shows = [(r.path, r.body) for r in wire.info_requests]
    assert shows == [("/api/show", {"model": "qwen3"})] * 3


def test_the_num_ctx_option_is_the_window_without_asking(wire, monkeypatch):
    import asyncio

    monkeypatch.setenv("OLLAMA_HOST", wire.url)
    assert asyncio.run(OllamaProvider("qwen3", num_ctx=4096).context_window()) == 4096
    assert wire.requests == []


def test_an_api_show_answer_over_the_limit_is_no_answer(wire, monkeypatch):
    """/api/show carries the model's licence and template: no more than SHOW_LIMIT bytes
    are read, and an answer cut there says nothing. A server that floods past the limit
    and never ends its body costs neither memory nor a wait for its end."""
    import asyncio
    import json

    from elelem_kernel.providers import ollama
    from tests.wire_servers import Reply

    monkeypatch.setenv("OLLAMA_HOST", wire.url)
    answer = {"parameters": "num_ctx 8192", "license": "x" * 400}
    size = len(json.dumps(answer).encode())
    wire.info["/api/show"] = _show(answer)
    monkeypatch.setattr(ollama, "SHOW_LIMIT", size)
    assert asyncio.run(OllamaProvider("qwen3").context_window()) == 8192
    monkeypatch.setattr(ollama, "SHOW_LIMIT", size - 1)
    assert asyncio.run(OllamaProvider("qwen3").context_window()) is None

    flood = [b'{"license": "', *[b"x" * 4096] * 4]
    wire.info["/api/show"] = Reply(200, {"content-type": "application/json"}, flood, end="stall")
    monkeypatch.setattr(ollama, "SHOW_LIMIT", 8192)
    provider = OllamaProvider("qwen3", read_timeout=30)
    # under get_json's own 10 s bound (INFO_TIMEOUT), so only the limit can answer in time
    asked = asyncio.wait_for(provider.context_window(), 5)
    assert asyncio.run(asked) is None  # the body was left after 8,192 bytes
