"""Local servers: the window they report, the refusal they send, the model they name, and
the sampling options each API takes; over real HTTP against the loopback wire server."""

from __future__ import annotations

import asyncio

import pytest

from elelem_kernel.errors import ConfigError, ContextOverflow
from elelem_kernel.providers.anthropic import AnthropicProvider
from elelem_kernel.providers.openai import OpenAIProvider
from elelem_kernel.providers.server_window import overflow
from tests.providers.conftest import fetch
from tests.wire_servers import Round
from tests.wire_servers.local_servers import (
    llama_cpp_info,
    lmstudio_info,
    overflow_body,
    overflow_reply,
    vllm_info,
)


def window(provider) -> int | None:
    async def go():
        try:
            return await provider.context_window()
        finally:
            await provider.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        (llama_cpp_info("smollm2", n_ctx=8192), 8192),
        (llama_cpp_info("smollm2", n_ctx=16384, slot_ctx=4096), 4096),  # --parallel 4
        (vllm_info("smollm2", max_model_len=32768), 32768),
        (lmstudio_info("smollm2", loaded=4096), 4096),
    ],
    ids=["llama.cpp", "llama.cpp-slots", "vllm", "lmstudio"],
)
def test_a_local_server_is_asked_for_its_window(wire, make, info, expected):
    wire.info.update(info)
    provider = make("openai", model="smollm2")
    assert not provider.official
    assert window(provider) == expected


def test_a_server_that_says_nothing_has_no_window(wire, make):
    assert window(make("openai", model="smollm2")) is None
    assert window(make("anthropic", model="smollm2")) is None


def test_llama_cpp_anthropic_endpoint_reports_the_window_too(wire, make):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    assert window(make("anthropic", model="smollm2")) == 8192


def test_the_official_endpoints_are_not_asked():
    assert OpenAIProvider(api_key="k").official
    assert AnthropicProvider(api_key="k").official
    assert window(OpenAIProvider(api_key="k")) is None  # known from the table, no request


@pytest.mark.parametrize(
    ("server", "fmt"),
    [
        ("llama.cpp", "openai"),
        ("vllm", "openai"),
        ("openai", "responses"),
        ("anthropic", "anthropic"),
    ],
)
def test_a_context_overflow_is_an_error_with_the_stated_window(wire, make, server, fmt):
    wire.queue(overflow_reply(server, requested=24075, limit=8192))
    result = fetch(make(fmt, model="smollm2"))
    assert isinstance(result.error, ContextOverflow)
    assert result.error.limit == 8192 and result.error.requested == 24075
    assert len(wire.requests) == 1  # not retried: the same request would fail the same way


def test_overflow_bodies_without_numbers_and_other_errors():
    code_only = '{"error": {"message": "Your input exceeds the context window of this model.", "code": "context_length_exceeded", "type": "invalid_request_error"}}'
    assert overflow(400, code_only) == (None, None)
    assert overflow(400, '{"error": {"message": "bad tool schema"}}') is None
    assert overflow(500, str(overflow_body("llama.cpp", 10, 5))) is None
    assert overflow(
        400, "request (9000 tokens) exceeds the available context size (8192 tokens)"
    ) == (8192, 9000)


def test_the_model_the_server_names_is_reported(wire, make):
    wire.script("openai", Round(text="hi", model="smollm2"))
    result = fetch(make("openai", model="gpt-4.1"))
    assert result.of("model") == [{"type": "model", "name": "smollm2"}]


def test_openai_sampling_options_and_extra_fields_reach_the_body(wire, make):
    wire.script("openai", Round(text="hi"))
    provider = make(
        "openai",
        temperature=0,
        top_p=0.9,
        seed=7,
        stop="END",
        extra={"min_p": 0.05, "repeat_penalty": 1.1},
    )
    assert fetch(provider).error is None
    body = wire.requests[0].body
    assert body["temperature"] == 0 and body["top_p"] == 0.9 and body["seed"] == 7
    assert body["stop"] == ["END"] and body["min_p"] == 0.05 and body["repeat_penalty"] == 1.1
    assert body["stream"] is True


def test_anthropic_responses_and_ollama_put_sampling_where_their_api_wants_it(wire, make):
    wire.script("anthropic", Round(text="hi"))
    assert fetch(make("anthropic", temperature=0.2, top_k=5, stop=["A", "B"])).error is None
    body = wire.requests[-1].body
    assert (
        body["temperature"] == 0.2 and body["top_k"] == 5 and body["stop_sequences"] == ["A", "B"]
    )
    wire.script("responses", Round(text="hi"))
    assert fetch(make("responses", temperature=0.5, extra={"top_logprobs": 2})).error is None
    assert wire.requests[-1].body["temperature"] == 0.5
    assert wire.requests[-1].body["top_logprobs"] == 2
    wire.script("ollama", Round(text="hi"))
    assert fetch(make("ollama", seed=3, temperature=0)).error is None
    assert wire.requests[-1].body["options"] == {"seed": 3, "temperature": 0.0}


@pytest.mark.parametrize(
    ("fmt", "options", "message"),
    [
        ("openai", {"temperature": "hot"}, "temperature must be a number"),
        ("openai", {"top_p": 3}, "top_p must be between 0 and 1"),
        ("openai", {"seed": 1.5}, "seed must be a whole number"),
        ("openai", {"stop": [1]}, "stop must be a text"),
        ("openai", {"extra": "min_p"}, "extra must be a JSON object"),
        ("openai", {"extra": {"stream": False}}, "extra may not set stream"),
        ("anthropic", {"seed": 1}, "unknown option for anthropic: seed"),
        ("responses", {"stop": "x"}, "unknown option for responses: stop"),
    ],
)
def test_bad_sampling_options_are_refused_with_a_clear_message(make, fmt, options, message):
    with pytest.raises(ConfigError, match=message):
        make(fmt, **options)


def test_anthropic_thinking_does_not_silently_raise_a_chosen_max_tokens(make):
    with pytest.raises(ConfigError, match=r"max_tokens=500.*raise max_tokens above 8,192"):
        make("anthropic", thinking="on", max_tokens=500)
    body = make("anthropic", thinking="on").body([{"role": "user", "content": "x"}], [])
    assert body["max_tokens"] == 12288  # the default is raised, as documented
    assert make("anthropic", thinking="on", max_tokens=20000).body([], [])["max_tokens"] == 20000


def test_ollamas_openai_compatible_endpoint_is_asked_through_api_show(wire, make):
    listing = {
        "object": "list",
        "data": [{"id": "qwen3", "object": "model", "owned_by": "library"}],
    }
    show = {"parameters": "num_ctx 4096", "model_info": {"qwen3.context_length": 40960}}
    wire.info.update({"/v1/models": listing, "/api/show": show})
    assert window(make("openai", model="qwen3")) == 4096
