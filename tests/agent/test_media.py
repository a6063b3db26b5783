"""Images a tool returns: allowlisted, fitted, bounded per call and per request, shown in
cards, sent to the model that takes them and described to the one that does not."""

from __future__ import annotations

import base64
import io
import json
import sys

import pytest

from elelem_kernel import images
from elelem_kernel.agent.context import estimate
from elelem_kernel.agent.conversation import Conversation
from elelem_kernel.agent.media import (
    MAX_IMAGES,
    for_request,
    known_vision,
    parse_vision,
    take_images,
)
from elelem_kernel.errors import ConfigError
from elelem_kernel.render.cards import images_html
from elelem_kernel.render.static import bundle
from tests.pictures import entry, png, png64


def test_images_are_taken_out_of_the_result_measured_and_bad_ones_dropped_with_a_note():
    result = {
        "ok": True,
        "_images": [
            entry(640, 480),
            {"mime_type": "image/svg+xml", "data": png64()},
            {"mime_type": "image/png", "data": '"><script>alert(1)</script>'},
            {"mime_type": "image/png", "data": base64.b64encode(b"not a png").decode()},
            "junk",
        ]
        + [entry()] * MAX_IMAGES,
    }
    kept = take_images(result)
    assert "_images" not in result
    assert kept[0]["mime_type"] == "image/png" and (kept[0]["width"], kept[0]["height"]) == (
        640,
        480,
    )
    assert base64.b64decode(kept[0]["data"]) == png(640, 480)
    assert len(kept) == MAX_IMAGES
    assert result["images_attached"][0] == "image 1: 640×480 PNG"
    notes = result["images_not_shown"]
    assert "image/svg+xml: not a PNG" in notes[0]
    assert "not valid base64" in notes[1] and "not a PNG" in notes[2]
    assert notes[3] == "not an image entry" and "more than 8 images" in notes[4]


def test_a_result_without_images_is_left_alone():
    result = {"ok": True, "content": "x"}
    assert take_images(result) == [] and result == {"ok": True, "content": "x"}


def test_a_large_image_is_downscaled_to_1568_on_its_long_side():
    pytest.importorskip("PIL")
    result = {"_images": [entry(3000, 1000)]}
    [image] = take_images(result)
    assert (image["width"], image["height"]) == (1568, 523)
    assert images.from_bytes(base64.b64decode(image["data"])).width == 1568  # type: ignore[union-attr]


def test_a_photo_is_re_encoded_as_jpeg_when_that_is_smaller():
    pil = pytest.importorskip("PIL.Image")
    size = (2000, 1500)
    bands = [pil.linear_gradient("L"), pil.radial_gradient("L")]
    photo = pil.merge("RGB", [b.resize(size) for b in bands] + [pil.effect_noise(size, 40)])
    out = io.BytesIO()
    photo.save(out, "PNG")
    data = base64.b64encode(out.getvalue()).decode()
    [image] = take_images({"_images": [{"mime_type": "image/png", "data": data}]})
    assert image["mime_type"] == "image/jpeg" and image["width"] == 1568
    assert len(image["data"]) < len(data) // 4


def test_without_pillow_a_small_image_passes_and_a_large_one_is_described(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL fails, as when not installed
    small = images.fit(images.from_bytes(png(3000, 10)))  # type: ignore[arg-type]
    assert isinstance(small, images.Image) and small.width == 3000  # the model scales it
    big = images.Image("image/png", b"\x89PNG" + b"x" * (images.MAX_BYTES + 1), 4000, 3000)
    said = images.fit(big)
    assert isinstance(said, str) and "4000×3000 PNG" in said and "install Pillow" in said


def test_sizes_are_read_from_png_gif_jpeg_and_webp_headers():
    gif = b"GIF89a" + (320).to_bytes(2, "little") + (200).to_bytes(2, "little") + b"\0" * 8
    jpeg = b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08" + (480).to_bytes(2, "big")
    jpeg += (640).to_bytes(2, "big") + b"\0" * 12
    webp = b"RIFF\0\0\0\0WEBPVP8X" + b"\0" * 8 + (99).to_bytes(3, "little")
    webp += (49).to_bytes(3, "little")
    assert images.size_of("image/png", png(7, 5)) == (7, 5)
    assert images.size_of("image/gif", gif) == (320, 200)
    assert images.size_of("image/jpeg", jpeg) == (640, 480)
    assert images.size_of("image/webp", webp) == (100, 50)
    assert images.size_of("image/png", b"\x89PNG\r\n\x1a\n") == (0, 0)


def test_a_request_sends_the_newest_images_up_to_the_limit_and_placeholders_for_the_rest():
    first, second = entry(10, 10), entry(20, 20)
    messages = [
        {"role": "user", "content": "plot"},
        {"role": "tool", "tool_call_id": "a", "content": '{"ok": true}', "images": [first]},
        {"role": "tool", "tool_call_id": "b", "content": '{"ok": true}', "images": [second]},
    ]
    sent = for_request(messages, vision=True, limit=1)
    assert "images" not in sent[1] and sent[2]["images"] == [second]
    assert json.loads(sent[1]["content"])["images_omitted"] == [
        "[image: 10×10 PNG, omitted] (over 1 in a request)"
    ]
    assert messages[1]["images"] == [first]  # the session's own messages are kept whole
    blind = for_request(messages, vision=False)
    assert not any("images" in m for m in blind)
    assert "the model takes no images" in blind[2]["content"]


def test_the_vision_option_and_the_known_models():
    assert parse_vision("off") is False and parse_vision("on") is True
    with pytest.raises(ConfigError, match="vision must be on or off"):
        parse_vision("maybe")
    assert known_vision("anthropic", "claude-sonnet-4-5") and known_vision("openai", "gpt-4.1")
    assert known_vision("ollama", "llava:7b") and known_vision("ollama", "qwen2.5vl")
    assert known_vision("demo", "demo")
    assert known_vision("openai", "o4-mini") and known_vision("openai", "o3")
    assert not known_vision("ollama", "qwen3") and not known_vision("openai", "o3-mini")
    assert not known_vision("openai", "gpt-oss:20b") and not known_vision("anthropic", "claude-2")
    assert not known_vision("openai", None)


def test_an_image_counts_in_the_estimate_by_its_pixels_not_its_base64():
    big = entry(1000, 750)
    message = {"role": "tool", "tool_call_id": "a", "content": "{}", "images": [big]}
    without = {"role": "tool", "tool_call_id": "a", "content": "{}"}
    assert estimate([message]) - estimate([without]) == 1000
    assert images.tokens(3136, 3136) == images.tokens(1568, 1568)


def test_an_earlier_turns_images_are_placeholders_in_history():
    conversation = Conversation()
    result = json.dumps({"ok": True, "stdout": ""})
    call = {"id": "c1", "name": "python", "arguments": {}, "result": result, "ok": True}
    for n in (1, 2, 3):
        calls = [{**call, "images": [entry(640, 480)]}]
        conversation.add(
            {
                "turn": f"t{n}",
                "prompt": f"p{n}",
                "reply": "r",
                "stop": "end_turn",
                "rounds": [{"text": "", "calls": calls if n == 3 else []}, {"text": "r"}],
            }
        )
    messages = conversation.messages("full")
    [tool] = [m for m in messages if m["role"] == "tool"]
    assert "images" not in tool
    assert json.loads(tool["content"])["images_omitted"] == [
        "[image from turn 3: 640×480 PNG, omitted]"
    ]


def test_the_card_shows_only_allowlisted_base64_images():
    html = images_html(
        [
            {"mime_type": "image/png", "data": png64()},
            {"mime_type": "text/html", "data": png64()},
            {"mime_type": "image/png", "data": '"onerror="alert(1)'},
            "junk",
        ]
    )
    assert html.count("<img") == 1 and f"data:image/png;base64,{png64()}" in html
    assert "onerror" not in html


def test_the_stored_record_keeps_each_image_once_in_the_outputs_html():
    image = entry(4, 3)
    record = {
        "v": 1,
        "turn": "t",
        "prompt": "p",
        "reply": "r",
        "stop": "end_turn",
        "rounds": [
            {
                "text": "",
                "thinking": "",
                "calls": [
                    {
                        "id": "c",
                        "name": "python",
                        "arguments": {},
                        "result": "{}",
                        "ok": True,
                        "ms": 1,
                        "images": [image],
                    }
                ],
            }
        ],
    }
    data, metadata = bundle(record)
    assert json.dumps(data).count(image["data"]) == 1  # in the HTML card
    stored = metadata["elelem"]["rounds"][0]["calls"][0]["images"]
    assert stored == [{"mime_type": "image/png", "width": 4, "height": 3, "in": "text/html"}]
    assert record["rounds"][0]["calls"][0]["images"] == [image]  # the session's copy is whole
    assert "[image: 4×3 PNG, omitted]" in images_html(stored)


def test_an_image_of_too_many_pixels_is_described_without_decoding_it():
    huge = images.from_bytes(png(6000, 5000))  # small bytes, 30 M pixels
    said = images.fit(huge)  # type: ignore[arg-type]
    assert isinstance(said, str) and "6000×5000 PNG" in said and "too many pixels" in said
