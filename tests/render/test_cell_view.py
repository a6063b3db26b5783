"""The view of a turn in a cell's output, picked by who watches the cell run."""

from __future__ import annotations

import sys

import pytest

from elelem_kernel.render.cell_view import EndView, Quiet, TextView, new_view


def test_the_watcher_picks_the_view():
    assert type(new_view("nobody", "echo", None)) is EndView
    assert type(new_view("text", "echo", None)) is TextView


def test_without_ipywidgets_a_watched_cell_gets_its_output_at_the_end(monkeypatch):
    monkeypatch.setitem(sys.modules, "elelem_kernel.render.widget", None)  # import fails
    assert type(new_view("widgets", "echo", "m1")) is EndView


def test_a_console_sees_the_reply_as_text_a_line_at_a_time(capsys):
    view = TextView()
    view({"type": "block_start", "index": 0, "block": "text"})
    view({"type": "block_delta", "index": 0, "text": "# Title\nsome **bold** words"})
    view({"type": "block_stop", "index": 0})
    out = capsys.readouterr().out
    assert "Title" in out and "some bold words" in out
    assert "**" not in out and "# " not in out  # Markdown rendered as terminal text


@pytest.mark.parametrize("text", ["", "a line\n"])
def test_quiet_writes_through_and_holds_back_flushes(text):
    class Out:
        def __init__(self) -> None:
            self.written, self.flushes = "", 0

        def write(self, text: str) -> None:
            self.written += text

        def flush(self) -> None:
            self.flushes += 1

    out = Out()
    quiet = Quiet(out)
    assert quiet.write(text) == len(text)
    quiet.flush()
    assert (out.written, out.flushes, quiet.isatty()) == (text, 0, False)
