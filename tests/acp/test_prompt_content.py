"""A prompt's images (acp/prompt_content.py): read, fitted and labelled, or refused whole
with a message that says which image and why."""

from __future__ import annotations

import asyncio
import base64
import io

import pytest

pytest.importorskip("acp")

from acp import (  # noqa: E402
    audio_block,
    embedded_blob_resource,
    image_block,
    resource_block,
    text_block,
)

from elelem_kernel import images as img  # noqa: E402
from elelem_kernel.acp.prompt_content import (  # noqa: E402
    MAX_IMAGES,
    PromptError,
    read_prompt,
    refusal,
)
from elelem_kernel.agent.session import Session  # noqa: E402
from elelem_kernel.providers.stub import StubProvider  # noqa: E402
from tests.pictures import png64  # noqa: E402


def read(blocks: list):
    """The prompt `session/prompt` reads from `blocks`, sent as the client sends them."""
    sent = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks]
    return asyncio.run(read_prompt(sent))


def refused(blocks: list) -> str:
    with pytest.raises(PromptError) as e:
        read(blocks)
    return str(e.value)


def test_an_image_is_fitted_and_leaves_a_line_where_it_stood():
    asked = read(
        [
            text_block("What is wrong here?"),
            image_block(png64(64, 48), "image/png", uri="file:///home/me/shot.png"),
            text_block("Be brief."),
        ]
    )
    assert asked.text == "What is wrong here?\n[image 1: 64×48 PNG, shot.png]\nBe brief."
    [image] = asked.images
    assert image == {"mime_type": "image/png", "data": png64(64, 48), "width": 64, "height": 48}


def test_an_embedded_image_resource_is_an_image_too_other_blobs_are_named():
    blob = embedded_blob_resource("file:///w/plot.png", png64(8, 8), mime_type="image/png")
    other = embedded_blob_resource("file:///w/a.bin", "AAAA", mime_type="application/x-foo")
    asked = read([text_block("see"), resource_block(blob), resource_block(other)])
    assert "[image 1: 8×8 PNG, plot.png]" in asked.text
    assert "[file:///w/a.bin (application/x-foo): not included]" in asked.text
    assert [i["width"] for i in asked.images] == [8]


def test_an_image_alone_is_a_prompt():
    asked = read([image_block(png64(), "image/png")])
    assert asked.text == "[image 1: 4×3 PNG]" and len(asked.images) == 1


def test_a_large_image_is_downscaled_as_a_tools_would_be():
    pillow = pytest.importorskip("PIL.Image")
    out = io.BytesIO()
    pillow.new("RGB", (3000, 2000), (10, 120, 200)).save(out, "PNG")
    asked = read(
        [text_block("big"), image_block(base64.b64encode(out.getvalue()).decode(), "image/png")]
    )
    [image] = asked.images
    assert (image["width"], image["height"]) == (img.MAX_SIDE, 1045)
    assert f"[image 1: {img.MAX_SIDE}×1045 " in asked.text


def test_bad_images_refuse_the_whole_prompt_saying_which_and_why():
    why = refused(
        [
            text_block("look"),
            image_block(png64(), "image/png"),
            image_block(png64(), "image/bmp"),
            image_block("not base64 at all!", "image/png"),
            image_block(base64.b64encode(b"plain text").decode(), "image/jpeg"),
        ]
    )
    assert why.startswith("the prompt was not sent: ")
    assert "image 2: image/bmp: not a PNG, JPEG, GIF or WebP image" in why
    assert "image 3: image/png: the data is not valid base64" in why
    assert "image 4: image/jpeg: not a PNG, JPEG, GIF or WebP image" in why
    assert "image 1" not in why


def test_an_image_past_what_may_be_taken_in_is_refused_before_decoding():
    huge = "A" * (img.MAX_INPUT_BYTES * 4 // 3 + 8)
    assert "image 1: image/png: 30.0 MB, more than an image may be" in refused(
        [image_block(huge, "image/png")]
    )


def test_more_images_than_a_request_sends_are_refused():
    blocks = [image_block(png64(), "image/png") for _ in range(MAX_IMAGES + 1)]
    assert f"has {MAX_IMAGES + 1} images; a prompt takes at most {MAX_IMAGES}" in refused(blocks)
    assert len(read(blocks[:MAX_IMAGES]).images) == MAX_IMAGES


def test_audio_is_refused_by_name():
    assert "type 'audio' is not accepted" in refused([audio_block("AAAA", "audio/wav")])


def test_a_model_without_vision_refuses_and_says_how_to_switch(monkeypatch):
    monkeypatch.delenv("ELELEM_OPTIONS", raising=False)
    images = read([image_block(png64(), "image/png")]).images
    blind = Session(StubProvider(), provider_name="stub", model="llama3")
    why = asyncio.run(refusal(blind, images))
    assert why is not None and why.startswith("llama3 takes no images, so the prompt was not sent")
    assert asyncio.run(refusal(blind, [])) is None
    seeing = Session(StubProvider(), provider_name="stub", model="gpt-4o")
    assert asyncio.run(refusal(seeing, images)) is None
    seeing.facts.provider_options["stub"] = {"max_images": "0"}
    assert "max_images is 0" in (asyncio.run(refusal(seeing, images)) or "")
