"""OpenAIProvider (Chat Completions) over real loopback HTTP: the request, interleaved
parallel fragments, missing and reused ids, reasoning fields, what goes back next round."""

from __future__ import annotations

import pytest

from elelem_kernel.providers.openai import OpenAIProvider
from tests.providers.conftest import KEY, PROMPT, TOOLS, fetch, results
from tests.wire_servers import Round, sse, stream_reply


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> bytes:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return sse({"id": "c1", "choices": choices, **extra})


def test_request_has_bearer_key_tools_and_usage_option(wire, make):
    wire.script("openai", Round(text="Hi."))
    fetch(make("openai", max_tokens=300))
    request = wire.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "tools": TOOLS,
        "max_tokens": 300,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_official_api_gets_max_completion_tokens_and_reasoning_effort():
    body = OpenAIProvider(max_tokens=300, thinking="high").body(PROMPT, [])
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body
    assert body["reasoning_effort"] == "high"


def test_interleaved_parallel_fragments_are_assembled_by_index(wire, make):
    wire.queue(
        stream_reply(
            "openai",
            [
                chunk({"role": "assistant", "reasoning_content": "Two files to check."}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_x",
                                "type": "function",
                                "function": {"name": "read", "arguments": ""},
                            }
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_y",
                                "type": "function",
                                "function": {"name": "read", "arguments": '{"path":'},
                            }
                        ]
                    }
                ),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path":"a.py"}'}}]}),
                chunk({"tool_calls": [{"index": 1, "function": {"arguments": '"b.py"}'}}]}),
                chunk({}, "tool_calls"),
                chunk(
                    usage={
                        "prompt_tokens": 90,
                        "completion_tokens": 30,
                        "prompt_tokens_details": {"cached_tokens": 64},
                    }
                ),
                b"data: [DONE]\n\n",
            ],
        )  # fmt: skip
    )
    got = fetch(make("openai"))
    assert [(e["id"], e["name"], e["arguments"]) for e in got.of("doing")] == [
        ("call_x", "read", {"path": "a.py"}),
        ("call_y", "read", {"path": "b.py"}),
    ]
    assert got.thinking == "Two files to check."
    assert got.of("usage") == [{"type": "usage", "input": 90, "output": 30, "cache_read": 64}]
    assert got.of("stop") == [{"type": "stop", "reason": "tool_calls", "truncated": False}]


def test_a_new_id_on_a_used_index_is_a_new_call(wire, make):
    wire.queue(
        stream_reply(
            "openai",
            [
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "function": {"name": "read", "arguments": '{"path":"a"}'},
                            }
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_2",
                                "function": {"name": "list", "arguments": ""},
                            }
                        ]
                    }
                ),
                chunk({}, "stop"),
                b"data: [DONE]\n\n",
            ],
        )  # fmt: skip
    )
    got = fetch(make("openai"))
    assert [(e["id"], e["name"], e["arguments"]) for e in got.of("doing")] == [
        ("call_1", "read", {"path": "a"}),
        ("call_2", "list", {}),
    ]


def test_second_round_sends_back_calls_results_and_reasoning_content(wire, make):
    first = Round(thinking="Check a.", calls=[("read", {"path": "a.py"}), ("list", {})], ids=False)
    wire.script("openai", first, Round(text="Done."))
    provider = make("openai")
    one = fetch(provider)
    ids = [e["id"] for e in one.of("doing")]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == 2
    assistant = one.assistant()
    two = fetch(provider, [*PROMPT, assistant, *results(assistant, '{"ok": true}', "[]")])
    assert two.text == "Done."
    sent = wire.requests[1].body["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": ids[0], "type": "function",
             "function": {"name": "read", "arguments": '{"path": "a.py"}'}},
            {"id": ids[1], "type": "function", "function": {"name": "list", "arguments": "{}"}},
        ],
        "reasoning_content": "Check a.",
    }  # fmt: skip
    assert sent[3:] == [
        {"role": "tool", "tool_call_id": ids[0], "content": '{"ok": true}'},
        {"role": "tool", "tool_call_id": ids[1], "content": "[]"},
    ]


def test_reasoning_field_is_read_but_not_echoed(wire, make):
    wire.script("openai", Round(thinking="Via vLLM.", text="Hi.", reasoning_field="reasoning"))
    got = fetch(make("openai"))
    assert got.thinking == "Via vLLM." and got.text == "Hi."
    assert all("metadata" not in e for e in got.of("thinking"))


def test_plain_replies_are_sent_back_as_text(wire, make):
    wire.script("openai", Round(text="ok"))
    earlier = {"role": "assistant", "content": "Earlier answer."}
    fetch(make("openai"), [*PROMPT, earlier, {"role": "user", "content": "more"}])
    assert wire.requests[0].body["messages"][2] == {
        "role": "assistant",
        "content": "Earlier answer.",
    }


@pytest.mark.parametrize(
    "finish, truncated", [("stop", False), ("length", True), ("content_filter", False)]
)
def test_finish_reasons_come_through_raw(wire, make, finish, truncated):
    wire.script("openai", Round(text="x", stop=finish))
    assert fetch(make("openai")).of("stop") == [
        {"type": "stop", "reason": finish, "truncated": truncated}
    ]


def test_an_error_event_mid_stream_is_reported(wire, make):
    error = sse({"error": {"message": "upstream died", "type": "server_error"}}, "error")
    wire.queue(stream_reply("openai", [chunk({"content": "Par"}), error]))
    got = fetch(make("openai"))
    assert str(got.error) == "openai stream error: server_error: upstream died"
    assert got.text == "Par"


def test_reasoning_sent_in_both_fields_is_shown_once(wire, make):
    both = {"reasoning_content": "Once.", "reasoning": "Once."}
    stream = [chunk(both), chunk({"content": "ok"}, "stop", error=None), b"data: [DONE]\n\n"]
    wire.queue(stream_reply("openai", stream))
    got = fetch(make("openai"))
    assert got.error is None and (got.thinking, got.text) == ("Once.", "ok")


def test_servers_other_than_openai_get_a_default_max_tokens():
    local = OpenAIProvider(base_url="http://127.0.0.1:8080/v1")
    assert local.body(PROMPT, [])["max_tokens"] == 8192
    official = OpenAIProvider().body(PROMPT, [])
    assert "max_tokens" not in official and "max_completion_tokens" not in official
    off = OpenAIProvider(base_url="http://127.0.0.1:8080/v1", max_tokens="off").body(PROMPT, [])
    assert "max_tokens" not in off
    with pytest.raises(Exception, match="max_tokens must be a number or off"):
        OpenAIProvider(base_url="http://x/v1", max_tokens="lots").body(PROMPT, [])


@pytest.mark.timeout(30)  # joined once: seconds; quadratic: a minute or more
def test_long_arguments_and_reasoning_in_small_fragments_are_joined_once():
    # 1.6 MB in 4-character fragments: `+=` on strings kept in dicts is quadratic (minutes).
    from elelem_kernel.providers.openai import _Stream

    value = "".join(f"{i % 10_000:04d}" for i in range(400_000))
    raw = '{"path": "' + value + '"}'
    events: list[dict] = []
    parser = _Stream(OpenAIProvider(), events.append)
    for at in range(0, len(value), 4):
        parser.feed("", {"choices": [{"delta": {"reasoning_content": value[at : at + 4]}}]})
    for at in range(0, len(raw), 4):
        fragment = {"index": 0, "function": {"arguments": raw[at : at + 4]}}
        if at == 0:
            fragment.update(id="c1", function={"name": "read", "arguments": raw[:4]})
        parser.feed("", {"choices": [{"delta": {"tool_calls": [fragment]}}]})
    parser.feed("", {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})
    parser.finish()
    doing = [e for e in events if e["type"] == "doing"]
    assert doing == [{"type": "doing", "id": "c1", "name": "read", "arguments": {"path": value}}]
    closing = [e for e in events if e.get("metadata")]
    assert closing[0]["metadata"] == {"openai": {"reasoning_content": value}}
