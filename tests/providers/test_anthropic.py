"""AnthropicProvider over real loopback HTTP: the request it sends, thinking signatures and
redacted blocks echoed byte for byte, tool results first, cache breakpoints, options."""

from __future__ import annotations

import json

import pytest

from elelem_kernel.errors import ConfigError
from elelem_kernel.providers.anthropic import AnthropicProvider
from tests.providers.conftest import KEY, PROMPT, TOOLS, fetch, results
from tests.wire_servers import Round, sse, stream_reply

CACHE = {"type": "ephemeral"}
SIGNATURE = "EqQBCkYIBxgCKkD+/=weird\\sig\u00e9=="


def test_request_carries_key_version_cache_breakpoints_and_stream(wire, make):
    wire.script("anthropic", Round(text="Hi."))
    fetch(make("anthropic", max_tokens=1000))
    request = wire.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1000,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": CACHE}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": CACHE}]}
        ],
        "tools": [
            {
                "name": "read",
                "description": "Read a file.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
                "cache_control": CACHE,
            }
        ],
        "stream": True,
    }


def test_second_round_echoes_thinking_first_then_results_before_text(wire, make):
    first = Round(
        thinking="Look at both files.",
        signature=SIGNATURE,
        redacted="cmVkYWN0ZWQ=",
        text="Reading.",
        calls=[("read", {"path": "a.py"}), ("list", {})],
    )
    wire.script("anthropic", first, Round(text="Done."))
    provider = make("anthropic")
    one = fetch(provider)
    assistant = one.assistant()
    follow = [*results(assistant, '{"ok": true, "text": "x"}', '{"ok": false, "error": "no"}')]
    follow.append({"role": "user", "content": "and then?"})
    two = fetch(provider, [*PROMPT, assistant, *follow])
    assert two.error is None and two.text == "Done."

    sent = wire.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [
        {"type": "thinking", "thinking": "Look at both files.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "toolu_2", "name": "list", "input": {}},
    ]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"ok": true, "text": "x"}'},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": '{"ok": false, "error": "no"}',
            "is_error": True,
        },
        {"type": "text", "text": "and then?", "cache_control": CACHE},
    ]


def test_a_signed_block_with_empty_text_still_sends_its_thinking_field(wire, make):
    stream = [
        sse({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        sse({"type": "content_block_start", "index": 0,
             "content_block": {"type": "thinking", "thinking": ""}}),
        sse({"type": "content_block_delta", "index": 0,
             "delta": {"type": "signature_delta", "signature": "onlysig"}}),
        sse({"type": "content_block_stop", "index": 0}),
        sse({"type": "content_block_start", "index": 1,
             "content_block": {"type": "tool_use", "id": "toolu_z", "name": "list", "input": {}}}),
        sse({"type": "content_block_stop", "index": 1}),
        sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
             "usage": {"output_tokens": 3}}),
        sse({"type": "message_stop"}),
    ]  # fmt: skip
    wire.queue(stream_reply("anthropic", stream))
    wire.script("anthropic", Round(text="ok"))
    provider = make("anthropic")
    one = fetch(provider)
    assert one.calls == [("list", {})] and one.thinking == ""
    assistant = one.assistant()
    fetch(provider, [*PROMPT, assistant, *results(assistant, '{"ok": true}')])
    blocks = wire.requests[1].body["messages"][1]["content"]
    assert blocks[0] == {"type": "thinking", "thinking": "", "signature": "onlysig"}


def test_thinking_from_another_provider_is_not_sent(wire, make):
    wire.script("anthropic", Round(text="ok"))
    assistant = {
        "role": "assistant",
        "content": "Earlier.",
        "thinking": [{"text": "unsigned"}, {"text": "", "metadata": {"openai": {"x": 1}}}],
    }
    fetch(make("anthropic"), [*PROMPT, assistant, {"role": "user", "content": "more"}])
    sent = wire.requests[0].body["messages"][1]
    assert sent == {"role": "assistant", "content": [{"type": "text", "text": "Earlier."}]}


def test_usage_adds_cache_reads_and_writes_to_input(wire, make):
    usage = {"input": 1300, "output": 52, "cache_read": 1200, "cache_write": 50}
    wire.script("anthropic", Round(text="ok", usage=usage))
    got = fetch(make("anthropic"))
    assert json.loads(wire.requests[0].raw)  # sanity: valid JSON went out
    assert got.of("usage") == [{"type": "usage", **usage}]


@pytest.mark.parametrize(
    "stop, truncated", [("end_turn", False), ("refusal", False), ("max_tokens", True),
                        ("model_context_window_exceeded", True)]
)  # fmt: skip
def test_stop_reasons_come_through_raw(wire, make, stop, truncated):
    wire.script("anthropic", Round(text="x", stop=stop))
    assert fetch(make("anthropic")).of("stop") == [
        {"type": "stop", "reason": stop, "truncated": truncated}
    ]


def _cut_call_stream(stop: str) -> list[bytes]:
    return [
        sse({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        sse({"type": "content_block_start", "index": 0,
             "content_block": {"type": "tool_use", "id": "toolu_c", "name": "write", "input": {}}}),
        sse({"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": '{"path": "a.py", "text": "ha'}}),
        sse({"type": "content_block_stop", "index": 0}),
        sse({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}}),
        sse({"type": "message_stop"}),
    ]  # fmt: skip


def test_a_call_cut_off_by_max_tokens_carries_what_arrived_and_is_never_whole(wire, make):
    # issue 18 item 7: the half-generated call is shown (the session never runs it)
    wire.queue(stream_reply("anthropic", _cut_call_stream("max_tokens")))
    got = fetch(make("anthropic"))
    [doing] = got.of("doing")
    assert got.error is None and list(doing["arguments"]) == ["partial (cut off)"]
    assert doing["name"] == "write" and doing["arguments"]["partial (cut off)"].startswith("{")
    assert got.of("stop") == [{"type": "stop", "reason": "max_tokens", "truncated": True}]


def test_a_call_with_broken_json_gets_empty_arguments_for_the_tool_to_refuse(wire, make):
    wire.queue(stream_reply("anthropic", _cut_call_stream("tool_use")))
    got = fetch(make("anthropic"))
    assert got.calls == [("write", {})]


def test_base_url_comes_from_the_environment_with_or_without_v1(wire, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    for base in (wire.url, wire.url + "/v1/"):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base)
        wire.script("anthropic", Round(text="env"))
        assert fetch(AnthropicProvider()).text == "env"
    assert [r.path for r in wire.requests] == ["/v1/messages", "/v1/messages"]


@pytest.mark.parametrize(
    "option, field, max_tokens",
    [
        (True, {"type": "enabled", "budget_tokens": 8192}, 12288),
        ("2048", {"type": "enabled", "budget_tokens": 2048}, 8192),
        ("high", {"type": "enabled", "budget_tokens": 16000}, 20096),
        ("adaptive", {"type": "adaptive"}, 8192),
        ("off", None, 8192),
    ],
)
def test_thinking_option(option, field, max_tokens):
    body = AnthropicProvider(thinking=option).body(PROMPT, TOOLS)  # max_tokens: the default
    assert body.get("thinking") == field and body["max_tokens"] == max_tokens


@pytest.mark.parametrize("option", ["lots", 100])
def test_bad_thinking_option_is_a_config_error(option):
    with pytest.raises(ConfigError, match="thinking"):
        AnthropicProvider(thinking=option).body(PROMPT, TOOLS)


def test_cache_breakpoint_skips_thinking_blocks_at_the_end():
    assistant = {
        "role": "assistant",
        "content": "",
        "thinking": [{"text": "t", "metadata": {"anthropic": {"signature": "s"}}}],
        "tool_calls": [{"id": "toolu_1", "name": "list", "arguments": {}}],
    }
    body = AnthropicProvider().body([*PROMPT, assistant], [])
    last = body["messages"][-1]["content"]
    assert "cache_control" not in last[0] and last[1]["cache_control"] == CACHE


def test_counts_in_message_delta_update_only_what_they_carry(wire, make):
    start = {"input_tokens": 35, "cache_read_input_tokens": 1200, "cache_creation_input_tokens": 7,
             "output_tokens": 1}  # fmt: skip
    stream = [
        sse({"type": "message_start", "message": {"usage": start}}),
        sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
             "usage": {"input_tokens": 35, "output_tokens": 52}}),
        sse({"type": "message_stop"}),
    ]  # fmt: skip
    wire.queue(stream_reply("anthropic", stream))
    assert fetch(make("anthropic")).of("usage") == [
        {"type": "usage", "input": 1242, "output": 52, "cache_read": 1200, "cache_write": 7}
    ]


@pytest.mark.timeout(30)  # joined once: seconds; quadratic: a minute or more
def test_long_arguments_and_thinking_in_small_deltas_are_joined_once():
    # 1.6 MB in 4-character deltas: `+=` on strings kept in dicts is quadratic (minutes).
    from elelem_kernel.providers.anthropic import _Stream

    value = "".join(f"{i % 10_000:04d}" for i in range(400_000))
    raw = '{"path": "' + value + '"}'
    events: list[dict] = []
    parser = _Stream(AnthropicProvider(api_key=KEY), events.append)
    parser.feed(
        "", {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}}
    )
    for at in range(0, len(value), 4):
        delta = {"type": "thinking_delta", "thinking": value[at : at + 4]}
        parser.feed("", {"type": "content_block_delta", "index": 0, "delta": delta})
        delta = {"type": "signature_delta", "signature": value[at : at + 4]}
        parser.feed("", {"type": "content_block_delta", "index": 0, "delta": delta})
    parser.feed("", {"type": "content_block_stop", "index": 0})
    block = {"type": "tool_use", "id": "c1", "name": "read", "input": {}}
    parser.feed("", {"type": "content_block_start", "index": 1, "content_block": block})
    for at in range(0, len(raw), 4):
        delta = {"type": "input_json_delta", "partial_json": raw[at : at + 4]}
        parser.feed("", {"type": "content_block_delta", "index": 1, "delta": delta})
    parser.feed("", {"type": "content_block_stop", "index": 1})
    meta = [e["metadata"] for e in events if e.get("metadata")]
    assert meta == [{"anthropic": {"signature": value, "thinking": value}}]
    doing = [e for e in events if e["type"] == "doing"]
    assert doing == [{"type": "doing", "id": "c1", "name": "read", "arguments": {"path": value}}]


def test_a_tool_result_with_images_sends_them_as_image_blocks(wire, make):
    wire.script("anthropic", Round(text="A logo."))
    image = {"mime_type": "image/png", "data": "iVBORw0KGgo="}
    call = {"id": "c1", "name": "shot", "arguments": {}}
    messages = [
        *PROMPT,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}', "images": [image]},
    ]
    fetch(make("anthropic"), messages)
    [result] = wire.requests[0].body["messages"][-1]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "c1"
    text, shown = result["content"]
    assert text == {"type": "text", "text": '{"ok": true}'}
    assert shown == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }


def test_cache_breakpoints_on_the_turns_prompt_and_the_last_message_four_at_most():
    messages = [
        *PROMPT,
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "name": "list"}]},
        {"role": "tool", "tool_call_id": "t1", "content": '{"ok": true}'},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t2", "name": "list"}]},
        {"role": "tool", "tool_call_id": "t2", "content": '{"ok": true}'},
    ]
    body = AnthropicProvider().body(messages, TOOLS)
    wire = body["messages"]
    assert wire[0]["content"] == [{"type": "text", "text": "Hi", "cache_control": CACHE}]
    assert wire[-1]["content"][-1]["cache_control"] == CACHE
    marks = json.dumps(body).count('"cache_control"')
    assert marks == 4  # system, tools, the turn's prompt, the last message
