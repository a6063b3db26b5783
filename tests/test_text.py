"""Bounded text: one cut marker for content, `…` for one-line labels."""

from __future__ import annotations

from elelem_kernel.agent.record import cut
from elelem_kernel.text import (
    clip,
    clip_lines,
    clip_middle,
    ends,
    human_size,
    line_cut,
    more,
    shorten,
    showing,
)


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


def test_a_result_cut_short_says_so_in_one_sentence():
    assert showing(300, 500, "names", "pass pattern= to narrow") == (
        "showing 300 of 500 names; pass pattern= to narrow"
    )
    assert showing("lines 10-14", 100, "", "call read with offset=15 for more") == (
        "showing lines 10-14 of 100; call read with offset=15 for more"
    )


def test_every_cut_tool_result_uses_the_one_sentence(tmp_path):
    from elelem_kernel.tools import file_tools
    from elelem_kernel.tools.namespace import list_variables
    from elelem_kernel.tools.workspace import Workspace

    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("x\n" * 50)
    ws = Workspace(tmp_path)
    read = file_tools.read(ws, "f0.txt", offset=1, limit=10)
    assert read["truncated"] == showing("lines 1-10", 50, "", "call read with offset=11 for more")
    names = list_variables({f"v{i}": i for i in range(400)})
    assert names["truncated"].startswith("showing 300 of 400 names; ")


def test_sizes_read_one_way_in_three_styles():
    assert [human_size(n) for n in (0, 999, 1_000, 1_234_567, 2_500_000_000)] == [
        "0 B",
        "999 B",
        "1.0 KB",
        "1.2 MB",
        "2.5 GB",
    ]
    # a bound reads as it was set
    assert [human_size(n, "limit") for n in (800, 64_000, 1_000_000, 1_500_000, 16_000_000)] == [
        "800 B",
        "64 KB",
        "1 MB",
        "1.5 MB",
        "16 MB",
    ]
    # a picture at a glance: whole kilobytes, never under one
    assert [human_size(n, "rough") for n in (70, 12_345, 999_499, 4_400_000)] == [
        "1 KB",
        "12 KB",
        "999 KB",
        "4.4 MB",
    ]
