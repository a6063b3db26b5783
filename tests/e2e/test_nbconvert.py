"""The saved turn and slash answers read well after the real `jupyter nbconvert --to markdown`.

nbconvert's Markdown exporter prefers `text/html` and pastes it as a raw HTML block; a
blank line ends such a block in CommonMark, so the rest of our HTML would be read as
Markdown. The notebook is built from the real `bundle()` and the real `/help` answer,
converted by the real nbconvert and parsed with markdown-it-py, as a reader's renderer would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

from elelem_kernel.agent.session import Session
from elelem_kernel.jupyter.front import say_bundle
from elelem_kernel.render.static import bundle
from tests.scripted import Scripted

REPLY = "Here:\n\n```python\ndef f():\n\n    return 1\n```\n\nend of reply"


def convert(tmp_path: Path, outputs: list[dict]) -> str:
    """The Markdown nbconvert writes for one code cell with these display outputs."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%elelem\nexplain f")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data=data, metadata=meta) for data, meta in outputs
    ]
    nb.cells = [cell]
    path = tmp_path / "turn.ipynb"
    nbformat.write(nb, path)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "markdown", str(path)],
        check=True,
        capture_output=True,
    )
    return (tmp_path / "turn.md").read_text()


def html_blocks(markdown: str) -> list[str]:
    return [t.content for t in MarkdownIt("commonmark").parse(markdown) if t.type == "html_block"]


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One conversion (nbconvert takes seconds to start): a turn, then the /help answer."""
    folder = tmp_path_factory.mktemp("nbconvert")
    help_ = Session(Scripted(), workspace=folder).command("/help")
    turn = bundle({"reply": REPLY, "stop": "end_turn"})
    return convert(folder, [turn, (say_bundle(help_), {})])


def test_a_turn_with_a_blank_line_in_its_code_stays_one_html_block(converted):
    turn = [b for b in html_blocks(converted) if "elelem-turn" in b]
    assert len(turn) == 1
    assert "return " in turn[0] and "end of reply" in turn[0]
    assert turn[0].rstrip().endswith("</div></div>")


def test_the_help_table_is_one_html_block_aligned_left(converted):
    (table,) = [b for b in html_blocks(converted) if "<table>" in b]
    assert "</table>" in table and "/help" in table
    assert '<th style="text-align:left">command</th>' in table
