"""Bounded text: one cut marker for content, `…` for one-line labels."""

from __future__ import annotations

from elelem_kernel.agent.record import cut
from elelem_kernel.text import clip, clip_lines, more, shorten
from elelem_kernel.tools.bounds import clip as tool_clip


def test_content_is_cut_with_one_marker_everywhere():
    assert clip("abcdef", 4) == "abcd [... 2 more characters]"
    assert clip("abc", 4) == "abc"
    assert cut("x" * 10, 4) == "xxxx\n[... 6 more characters]"
    assert tool_clip("y" * 10, 4) == "yyyy [... 6 more characters]"
    assert more(3, "lines") == "[... 3 more lines]"


def test_labels_end_in_an_ellipsis_within_their_limit():
    assert shorten("abcdef", 4) == "abc…" and len(shorten("x" * 99, 40)) == 40
    assert shorten("abc", 4) == "abc"


def test_previews_are_cut_by_lines_and_characters_with_the_same_marker():
    assert clip_lines("a\nb\nc\n", 2, 100) == ["a", "b", "[... 1 more line]"]
    assert clip_lines("abcdef\nxy", 5, 4) == ["abcd[... 2 more characters]", "[... 1 more line]"]
    assert clip_lines("a\nb", 5, 100) == ["a", "b"]
