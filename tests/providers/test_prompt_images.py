"""A prompt's own images (a user message's `images`) in each provider's wire format, as the
loopback server receives them: after the prompt's text, base64 intact."""

from __future__ import annotations

import pytest

from tests.pictures import png, png64
from tests.providers.conftest import fetch
from tests.wire_servers import Round

IMAGE = {"mime_type": "image/png", "data": png64(6, 5), "width": 6, "height": 5}
ASKED = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is this?\n[image 1: 6×5 PNG]", "images": [IMAGE]},
]
URL = f"data:image/png;base64,{IMAGE['data']}"
#: The prompt message as each format's server receives it.
EXPECTED = {
    "anthropic": {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?\n[image 1: 6×5 PNG]"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": IMAGE["data"]},
            },
        ],
    },
    "openai": {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?\n[image 1: 6×5 PNG]"},
            {"type": "image_url", "image_url": {"url": URL}},
        ],
    },
    "responses": {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is this?\n[image 1: 6×5 PNG]"},
            {"type": "input_image", "image_url": URL},
        ],
    },
    "ollama": {
        "role": "user",
        "content": "What is this?\n[image 1: 6×5 PNG]",
        "images": [IMAGE["data"]],
    },
}


@pytest.mark.parametrize("fmt", sorted(EXPECTED))
def test_the_prompts_images_reach_the_server_in_its_format(wire, make, fmt):
    wire.script(fmt, Round(text="A red square."))
    done = fetch(make(fmt), ASKED)
    assert done.error is None and done.text == "A red square."
    body = wire.requests[0].body
    sent = body["input"] if fmt == "responses" else body["messages"]
    prompt = sent[-1]
    if fmt == "anthropic":  # the last message carries a cache breakpoint
        assert prompt["content"][-1].pop("cache_control") == {"type": "ephemeral"}
    assert prompt == EXPECTED[fmt]


@pytest.mark.parametrize("fmt", sorted(EXPECTED))
def test_a_prompt_without_images_is_sent_as_before(wire, make, fmt):
    wire.script(fmt, Round(text="Hi."))
    fetch(make(fmt), [ASKED[0], {"role": "user", "content": "Hi"}])
    body = wire.requests[0].body
    prompt = (body["input"] if fmt == "responses" else body["messages"])[-1]
    assert "images" not in prompt
    if fmt == "anthropic":
        assert [b["type"] for b in prompt["content"]] == ["text"]
    else:
        assert prompt["content"] == "Hi"


def test_llm_models_get_the_prompts_images_as_attachments_where_they_take_them():
    import llm

    from elelem_kernel.providers.llm import LLMProvider, request

    provider = LLMProvider(model="echo")
    webp = {"mime_type": "image/webp", "data": png64()}
    messages = [ASKED[0], {**ASKED[1], "images": [IMAGE, webp]}]
    kwargs = request(llm, provider.llm_model, messages, [], {})
    [attachment] = kwargs["attachments"]
    assert attachment.type == "image/png" and attachment.content == png(6, 5)
    assert kwargs["prompt"].endswith("[image: image/webp, a type this model does not take]")
