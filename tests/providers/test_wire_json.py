"""What a server streams is read through `providers/wire_json.py`'s readers: a field of
the wrong type is skipped (no text, no object, no count), never a TypeError or an
AttributeError from deep inside a parser."""

from __future__ import annotations

import pytest

from elelem_kernel.providers import wire_json
from elelem_kernel.providers.anthropic import AnthropicProvider
from elelem_kernel.providers.anthropic import _Stream as AnthropicStream
from elelem_kernel.providers.ollama import OllamaProvider
from elelem_kernel.providers.ollama import _Stream as OllamaStream
from elelem_kernel.providers.openai import OpenAIProvider
from elelem_kernel.providers.openai import _Stream as OpenAIStream
from elelem_kernel.providers.responses import ResponsesProvider
from elelem_kernel.providers.responses import _Stream as ResponsesStream
from elelem_kernel.providers.wire_json import count, counted, function, items, mapping, text


def test_readers_narrow_or_give_a_neutral_value():
    assert mapping({"a": 1}) == {"a": 1} and mapping("a") == {} and mapping(None) == {}
    assert items([1]) == [1] and items({"a": 1}) == [] and items("ab") == []
    assert text("x") == "x" and text(5) == "" and text(None) == ""
    assert count(3) == 3 and count(12.0) == 12 and count(-2) == -2
    assert count(True) is None and count("12") is None and count(1.5) is None
    assert counted(None) == 0 and counted(0) == 0 and counted(7) == 7 and counted("x") is None


def test_function_reads_a_declaration_or_the_function_itself():
    declared = {"type": "function", "function": {"name": "read", "description": "Read."}}
    assert function(declared) == {"name": "read", "description": "Read.", "parameters": None}
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    bare = {"name": "read", "parameters": schema}
    assert function(bare) == {"name": "read", "description": "", "parameters": schema}
    assert function({"function": "read"})["name"] == ""


def _feed(parser, events):
    for name, data in events:
        parser.feed(name, data)
    parser.finish()


def test_anthropic_skips_fields_of_the_wrong_type():
    got: list[dict] = []
    _feed(
        AnthropicStream(AnthropicProvider(api_key="sk-test"), got.append),
        [
            ("", {"type": "message_start", "message": "not an object"}),
            ("", {"type": "message_start", "message": {"usage": {"input_tokens": "5"}}}),
            ("", {"type": "content_block_start", "index": 0, "content_block": ["text"]}),
            ("", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}),
            ("", {"type": "content_block_start", "index": 1, "content_block": {"type": "text"}}),
            ("", {"type": "content_block_delta", "index": 1, "delta": 7}),
            ("", {"type": "content_block_delta", "index": 1,
                  "delta": {"type": "text_delta", "text": 42}}),
            ("", {"type": "content_block_delta", "index": 1,
                  "delta": {"type": "text_delta", "text": "ok"}}),
            ("", {"type": "content_block_stop", "index": [1]}),
            ("", {"type": "message_delta", "delta": {"stop_reason": 3},
                  "usage": {"output_tokens": 2}}),
            ("", {"type": "message_stop"}),
        ],
    )  # fmt: skip
    assert got == [
        {"type": "saying", "text": "ok"},
        {"type": "usage", "cache_read": 0, "cache_write": 0, "output": 2},
        {"type": "stop", "reason": None, "truncated": False},
    ]


def test_anthropic_names_an_error_event_whatever_its_shape():
    parser = AnthropicStream(AnthropicProvider(api_key="sk-test"), lambda event: None)
    with pytest.raises(Exception, match="anthropic stream error: error: overloaded"):
        parser.feed("error", {"type": "error", "error": "overloaded"})


def test_openai_skips_choices_fragments_and_counts_of_the_wrong_type():
    got: list[dict] = []
    _feed(
        OpenAIStream(OpenAIProvider(api_key="k"), got.append),
        [
            ("", {"choices": [5, {"index": 0, "delta": "x"}]}),
            ("", {"choices": [{"delta": {"content": 5, "reasoning": ["r"]}}]}),
            ("", {"choices": [{"delta": {"tool_calls": ["x", {"index": 0, "id": "c1",
                  "function": {"name": "read", "arguments": 5}}]}}]}),
            ("", {"choices": [{"delta": {"tool_calls": [{"index": 0,
                  "function": {"arguments": '{"path": "a"}'}}]}, "finish_reason": "tool_calls"}]}),
            ("", {"choices": [], "usage": {"prompt_tokens": "12", "completion_tokens": 3.0}}),
            ("", "[DONE]"),
        ],
    )  # fmt: skip
    assert got == [
        {"type": "doing", "id": "c1", "name": "read", "arguments": {"path": "a"}},
        {"type": "usage", "output": 3},
        {"type": "stop", "reason": "tool_calls", "truncated": False},
    ]


def test_responses_skips_items_and_parts_of_the_wrong_type():
    got: list[dict] = []
    _feed(
        ResponsesStream(ResponsesProvider(api_key="k"), got.append),
        [
            ("", {"type": "response.output_text.delta", "item_id": "m0", "delta": ["x"]}),
            ("", {"type": "response.output_item.done", "item": "x"}),
            ("", {"type": "response.output_item.done",
                  "item": {"type": "message", "content": [1, {"type": "output_text", "text": "hi"}]}}),
            ("", {"type": "response.output_item.done",
                  "item": {"type": "function_call", "call_id": "c1", "name": "read",
                           "arguments": 5}}),
            ("", {"type": "response.completed", "response": {"status": "completed",
                  "usage": {"input_tokens": "9", "output_tokens": 4}}}),
        ],
    )  # fmt: skip
    assert got == [
        {"type": "saying", "text": "hi"},
        {"type": "doing", "id": "c1", "name": "read", "arguments": {}},
        {"type": "usage", "output": 4},
        {"type": "stop", "reason": "completed", "truncated": False},
    ]


def test_ollama_skips_messages_and_calls_of_the_wrong_type():
    got: list[dict] = []
    _feed(
        OllamaStream(OllamaProvider(), got.append),
        [
            ("", {"message": "x"}),
            ("", {"message": {"content": 5, "thinking": "t", "tool_calls": [1, {"function": 2}]}}),
            ("", {"done": True, "done_reason": None, "prompt_eval_count": "x", "eval_count": 2}),
        ],
    )
    assert got == [
        {"type": "thinking", "text": "t"},
        {"type": "doing", "id": got[1]["id"], "name": "", "arguments": {}},
        {"type": "usage", "output": 2},
        {"type": "stop", "reason": "stop", "truncated": False},
    ]


def test_loads_reads_what_json_loads_reads_and_refuses_the_rest():
    import json

    texts = ['{"a": [1, 2.5, null, true]}', " {} ", "[1]\n", '"x"', "12", "1e400", "NaN"]
    for one in texts:  # compared as JSON texts: NaN is not equal to itself
        assert json.dumps(wire_json.loads(one)) == json.dumps(json.loads(one))
    for bad in ["", "{", '{"a": 1} x', "1 2", "\ufeff{}", "[" * 100_000]:
        with pytest.raises((ValueError, RecursionError)):
            json.loads(bad)
        with pytest.raises((ValueError, RecursionError)):
            wire_json.loads(bad)
