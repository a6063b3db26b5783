"""Markdown as terminal text, whole and streamed (render/markdown_text.py)."""

from __future__ import annotations

import io

from elelem_kernel.render.markdown_text import MarkdownStream, to_text

REPLY = """# Result

Some **bold**, *slanted* and `code` text, a [link](https://example.com).

- one
  - nested
- two

| name | count |
|:---|---:|
| sheep | 12 |
| goats | 3 |

```python
x = 1  # **not bold**
```

> quoted
"""


def test_markup_goes_and_the_text_stays():
    text = to_text(REPLY)
    prose = text.replace("**not bold**", "")
    assert "**" not in prose and "`" not in prose and "|" not in prose
    assert "Some bold, slanted and code text, a link (https://example.com)." in text
    assert "Result\n======" in text
    assert "- one\n  - nested\n- two" in text
    assert "name   count\n-----  -----\nsheep     12\ngoats      3" in text
    assert "    x = 1  # **not bold**" in text  # code is shown as written, indented
    assert "> quoted" in text


class Pushes(io.StringIO):
    """A stream that counts its flushes: a kernel sends one message per flush."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


def streamed(pieces: list[str], interval: float = 60.0) -> tuple[str, int]:
    out = Pushes()
    stream = MarkdownStream(out, interval=interval)
    for piece in pieces:
        stream.write(piece)
    stream.finish()
    return out.getvalue(), out.flushes


def test_streamed_a_character_at_a_time_it_reads_as_the_whole():
    text, _ = streamed(list(REPLY))
    assert text.strip() == to_text(REPLY)
    assert "sheep     12" in text and "    x = 1  # **not bold**" in text


def test_a_long_line_streams_in_pieces_without_markers_or_new_blocks():
    words = [f"w{i} " for i in range(60)] + ["**bold words** and ", "10. not a list "] * 10
    out = Pushes()
    stream = MarkdownStream(out, interval=60.0)
    for word in words:
        stream.write(word)
    shown_before_the_end = out.getvalue()
    stream.finish()
    assert shown_before_the_end.startswith("w0 w1")  # pieces went out before the line ended
    text = out.getvalue()
    assert "**" not in text and "bold words and 10. not a list" in text
    assert text.count("\n") == 1


def test_pushes_are_coalesced():
    _, flushes = streamed([f"w{i} " for i in range(300)] + ["\n"])
    assert flushes <= 2  # one at the start, one at the end; never one per piece


def test_what_is_held_back_is_bounded():
    out = Pushes()
    stream = MarkdownStream(out, interval=60.0)
    stream.write("x" * 10_000)  # one word, no place to cut
    assert len(stream.pending) < 5_000 and out.getvalue().startswith("xxx")
    stream.write("\n| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 1_000)
    assert len(stream.table) < 300
    stream.finish()
    assert out.getvalue().count("1  2") == 1_000
