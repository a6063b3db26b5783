"""A local server's window asked ahead of the turn that needs it (providers/window_ahead.py):
the session's own question takes the answer once, while fresh, for the same server and
model; over real HTTP against the loopback wire server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from elelem_kernel.providers import window_ahead
from elelem_kernel.providers.server_window import template_note
from tests.ports import free_port
from tests.providers.conftest import CLASSES
from tests.wire_servers.local_servers import llama_cpp_info


@pytest.fixture(autouse=True)
def nothing_kept() -> Iterator[None]:
    window_ahead.forget()
    yield
    window_ahead.forget()


def run(coroutine_of, provider):
    async def go():
        try:
            return await coroutine_of(provider)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def ahead(provider) -> window_ahead.Answer | None:
    return run(window_ahead.remember, provider)


def window(provider) -> int | None:
    return run(lambda p: p.context_window(), provider)


def test_the_sessions_question_takes_the_answer_asked_ahead_once(wire, make):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192, slot_ctx=4096))
    answer = ahead(make("openai", model="smollm2"))
    assert answer is not None and answer.window == 4096
    asked = len(wire.info_requests)
    assert asked == 2  # /v1/models, then /props

    assert window(make("openai", model="smollm2")) == 4096
    assert len(wire.info_requests) == asked  # the turn asked the server nothing
    assert window(make("openai", model="smollm2")) == 4096
    assert len(wire.info_requests) == 2 * asked  # taken once: the next one asks


def test_an_answer_of_no_window_is_kept_too(wire, make):
    answer = ahead(make("openai", model="smollm2"))  # the server says nothing of it
    assert answer is not None and answer.window is None
    asked = len(wire.info_requests)
    assert window(make("openai", model="smollm2")) is None
    assert len(wire.info_requests) == asked


def test_another_model_or_server_asks_its_own(wire, make):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    ahead(make("openai", model="smollm2"))
    asked = len(wire.info_requests)
    window(make("openai", model="qwen3"))  # not smollm2's answer: asked
    assert len(wire.info_requests) > asked
    asked = len(wire.info_requests)
    assert window(make("openai", model="smollm2")) == 8192  # still kept for smollm2
    assert len(wire.info_requests) == asked
    other = make("openai", model="smollm2", base_url=f"http://127.0.0.1:{free_port()}/v1")
    assert window(other) is None  # nothing listens there: not the answer kept above


def test_a_stale_answer_is_asked_again(wire, make, monkeypatch):
    wire.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    ahead(make("openai", model="smollm2"))
    asked = len(wire.info_requests)
    monkeypatch.setattr(window_ahead, "FRESH", -1.0)
    assert window(make("openai", model="smollm2")) == 8192
    assert len(wire.info_requests) > asked


def test_a_server_not_reached_keeps_nothing(make):
    url = f"http://127.0.0.1:{free_port()}/v1"
    assert ahead(make("openai", model="smollm2", base_url=url)) is None
    assert window_ahead.recall(CLASSES["openai"](model="smollm2", base_url=url)) is None


def test_the_servers_notes_come_with_the_answer(wire, make):
    info = llama_cpp_info("smollm2", n_ctx=8192)
    info["/props"]["chat_template_caps"] = {"supports_tools": False}
    wire.info.update(info)
    ahead(make("openai", model="smollm2"))
    provider = make("openai", model="smollm2")
    assert window(provider) == 8192
    assert provider.notes == [template_note(info["/props"])]


def test_ollama_is_asked_ahead_through_api_show(wire, make):
    wire.info["/api/show"] = {"parameters": "num_ctx 16384", "model_info": {}}
    answer = ahead(make("ollama", model="qwen3"))
    assert answer is not None and answer.window == 16384
    asked = len(wire.info_requests)
    assert window(make("ollama", model="qwen3")) == 16384
    assert len(wire.info_requests) == asked
    # a window the person set is theirs, and leaves an answer asked ahead where it was
    ahead(make("ollama", model="qwen3"))
    assert window(make("ollama", model="qwen3", num_ctx=2048)) == 2048
    assert window(make("ollama", model="qwen3")) == 16384
    assert len(wire.info_requests) == 2 * asked
