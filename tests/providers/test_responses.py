"""ResponsesProvider over real loopback HTTP: a stateless request, reasoning items with
encrypted content echoed untouched, function calls and outputs, incomplete and failed."""

from __future__ import annotations

import pytest

from elelem_kernel.providers.responses import ResponsesProvider
from tests.providers.conftest import KEY, PROMPT, fetch, results
from tests.wire_servers import Round, sse, stream_reply


def test_request_is_stateless_with_encrypted_reasoning_and_flat_tools(wire, make):
    wire.script("responses", Round(text="Hi."))
    fetch(make("responses", max_tokens=500))
    request = wire.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": "Hi"}],
        "tools": [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        ],
        "reasoning": {"summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 500,
        "store": False,
        "stream": True,
    }


@pytest.mark.parametrize(
    "option, reasoning",
    [
        ("off", None),
        ("high", {"summary": "auto", "effort": "high"}),
        (True, {"summary": "auto", "effort": "medium"}),
    ],
)
def test_thinking_option_sets_effort_or_turns_reasoning_off(option, reasoning):
    body = ResponsesProvider("gpt-4.1", thinking=option).body(PROMPT, [])
    assert body.get("reasoning") == reasoning
    body = ResponsesProvider(thinking=option).body(PROMPT, [])
    assert body.get("reasoning") == reasoning
    assert ("include" in body) == (reasoning is not None)


def test_second_round_echoes_reasoning_items_then_calls_and_outputs(wire, make):
    first = Round(
        thinking="Need the file.",
        encrypted="gAAAA+opaque/blob==",
        calls=[("read", {"path": "a.py"}), ("list", {})],
    )
    wire.script("responses", first, Round(text="Done."))
    provider = make("responses")
    one = fetch(provider)
    assert one.thinking == "Need the file."
    assistant = one.assistant()
    two = fetch(provider, [*PROMPT, assistant, *results(assistant, '{"ok": true}', "[]")])
    assert two.text == "Done."
    assert wire.requests[1].body["input"][1:] == [
        {
            "id": "rs_wire",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Need the file."}],
            "encrypted_content": "gAAAA+opaque/blob==",
        },
        {"type": "function_call", "call_id": "call_1", "name": "read",
         "arguments": '{"path": "a.py"}'},
        {"type": "function_call", "call_id": "call_2", "name": "list", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": '{"ok": true}'},
        {"type": "function_call_output", "call_id": "call_2", "output": "[]"},
    ]  # fmt: skip


def test_text_of_earlier_turns_goes_back_as_assistant_messages(wire, make):
    wire.script("responses", Round(text="ok"))
    earlier = {"role": "assistant", "content": "Earlier."}
    fetch(make("responses"), [*PROMPT, earlier, {"role": "user", "content": "more"}])
    assert wire.requests[0].body["input"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Earlier."},
        {"role": "user", "content": "more"},
    ]


@pytest.mark.parametrize(
    "stop, reason, truncated",
    [
        (None, "completed", False),
        ("max_output_tokens", "max_output_tokens", True),
        ("content_filter", "content_filter", False),
    ],
)
def test_completed_and_incomplete_responses(wire, make, stop, reason, truncated):
    wire.script("responses", Round(text="x", stop=stop))
    got = fetch(make("responses"))
    assert got.of("stop") == [{"type": "stop", "reason": reason, "truncated": truncated}]


def test_a_failed_response_is_an_error(wire, make):
    wire.script("responses", Round(text="partial", stop="failed"))
    got = fetch(make("responses"))
    assert str(got.error) == "responses stream error: server_error: scripted failure"
    assert got.text == "partial"


def test_items_without_deltas_still_show(wire, make):
    item = {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Whole."}]}  # fmt: skip
    done = {"type": "response.completed", "response": {"status": "completed", "usage": {}}}
    wire.queue(
        stream_reply(
            "responses", [sse({"type": "response.output_item.done", "item": item}), sse(done)]
        )
    )
    got = fetch(make("responses"))
    assert got.text == "Whole." and got.of("usage") == []


def test_summary_parts_are_separated_by_a_blank_line(wire, make):
    def delta(index: int, text: str) -> bytes:
        return sse({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
                    "summary_index": index, "delta": text})  # fmt: skip

    done = {"type": "response.completed", "response": {"status": "completed"}}
    wire.queue(stream_reply("responses", [delta(0, "First."), delta(1, "Second."), sse(done)]))
    assert fetch(make("responses")).thinking == "First.\n\nSecond."


@pytest.mark.parametrize(
    "model, reasons", [("gpt-5", True), ("o4-mini", True), ("openai/gpt-oss-20b", True),
                       ("gpt-4.1", False), ("my-local-model", False)]
)  # fmt: skip
def test_by_default_only_reasoning_models_get_reasoning_settings(model, reasons):
    body = ResponsesProvider(model).body(PROMPT, [])
    assert ("reasoning" in body, "include" in body) == (reasons, reasons)
