"""Images a tool shows the person: allowlisted types, bounded, taken out of the result."""

from __future__ import annotations

from elelem_kernel.agent.media import MAX_CHARS, MAX_IMAGES, take_images
from elelem_kernel.render.cards import images_html

PNG = "iVBORw0KGgo="


def test_images_are_taken_out_of_the_result_and_bad_ones_dropped_with_a_note():
    result = {
        "ok": True,
        "_images": [
            {"mime_type": "image/png", "data": PNG},
            {"mime_type": "image/svg+xml", "data": PNG},
            {"mime_type": "image/png", "data": '"><script>alert(1)</script>'},
            {"mime_type": "image/png", "data": "A" * (MAX_CHARS + 4)},
        ]
        + [{"mime_type": "image/gif", "data": PNG}] * MAX_IMAGES,
    }
    kept = take_images(result)
    assert "_images" not in result
    assert kept[0] == {"mime_type": "image/png", "data": PNG}
    assert len(kept) == MAX_IMAGES
    notes = result["images_not_shown"]
    assert len(notes) == 4
    assert "image/svg+xml" in notes[0] and "more than the card shows" in notes[2]


def test_a_result_without_images_is_left_alone():
    result = {"ok": True, "content": "x"}
    assert take_images(result) == [] and result == {"ok": True, "content": "x"}


def test_the_card_shows_only_allowlisted_base64_images():
    html = images_html(
        [
            {"mime_type": "image/png", "data": PNG},
            {"mime_type": "text/html", "data": PNG},
            {"mime_type": "image/png", "data": '"onerror="alert(1)'},
            "junk",
        ]
    )
    assert html.count("<img") == 1 and f"data:image/png;base64,{PNG}" in html
    assert "onerror" not in html
