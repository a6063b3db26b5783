"""Bounded text: one cut marker for content, `…` for one-line labels."""

from __future__ import annotations

from elelem_kernel.agent.record import cut
from elelem_kernel.text import clip, clip_lines, clip_middle, ends, line_cut, more, shorten


def test_content_is_cut_with_one_marker_everywhere():
    assert clip("abcdef", 4) == "abcd [... 2 more characters]"
    assert clip("abc", 4) == "abc"
    assert cut("x" * 10, 4) == "xxxx\n[... 6 more characters]"
    assert more(3, "lines") == "[... 3 more lines]"


def test_text_kept_at_both_ends_says_what_the_middle_lost():
    assert (
        clip_middle("abcdefghij", 6) == "abcd\n[... 4 characters cut from the middle of 10 ...]\nij"
    )
    assert clip_middle("abc", 6) == "abc" and clip_middle("abcdefgh", 1).endswith("...]\nh")
    assert ends("ab", "yz", 3, 7, "bytes") == "ab\n[... 3 bytes cut from the middle of 7 ...]\nyz"
    assert ends("ab", "yz", 0, 4) == "abyz"
    assert line_cut(1_000_001) == "[... line cut: 1000001 bytes in all]"


def test_labels_end_in_an_ellipsis_within_their_limit():
    assert shorten("abcdef", 4) == "abc…" and len(shorten("x" * 99, 40)) == 40
    assert shorten("abc", 4) == "abc"


def test_previews_are_cut_by_lines_and_characters_with_the_same_marker():
    assert clip_lines("a\nb\nc\n", 2, 100) == ["a", "b", "[... 1 more line]"]
    assert clip_lines("abcdef\nxy", 5, 4) == ["abcd[... 2 more characters]", "[... 1 more line]"]
    assert clip_lines("a\nb", 5, 100) == ["a", "b"]
