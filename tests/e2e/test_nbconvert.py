"""The saved turn and slash answers read well after the real `jupyter nbconvert --to markdown`,
and prompts holding code fences after `--to elelem-markdown`.

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
from elelem_kernel.jupyter.kernel import ElelemKernel
from elelem_kernel.jupyter.shell_front import say_bundle
from elelem_kernel.render.static import bundle
from tests.scripted import Scripted

PROMPT = "explain this:\n\n```python\ndef f():\n    return 1\n```\n\nand a ````` run"
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
    return nbconvert(path, "--to", "markdown")


def nbconvert(path: Path, *args: str) -> str:
    """`jupyter nbconvert ARGS... PATH`, as a person runs it; the Markdown it wrote."""
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", *args, str(path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return path.with_suffix(".md").read_text()


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


def elelem_notebook(path: Path) -> Path:
    """An Elelem-kernel notebook, as the kernel saves it: a prompt with fences, its turn, and a
    plain prompt."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "elelem", "display_name": "Elelem", "language": "elelem"}
    nb.metadata["language_info"] = dict(ElelemKernel.language_info)
    asked = nbformat.v4.new_code_cell(PROMPT)
    data, meta = bundle({"prompt": PROMPT, "reply": REPLY, "stop": "end_turn"})
    asked.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=meta)]
    nb.cells = [asked, nbformat.v4.new_code_cell("and now a plain prompt")]
    nbformat.write(nb, path)
    return path


def check_fences(markdown: str) -> None:
    """Each prompt is one fenced block holding its source whole; the turn is its Markdown."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    fences = [(t.info, t.content) for t in tokens if t.type == "fence"]
    assert fences == [
        ("elelem", PROMPT + "\n"),
        ("python", "def f():\n\n    return 1\n"),  # the reply's own code block
        ("elelem", "and now a plain prompt\n"),
    ]
    assert not [t for t in tokens if t.type == "html_block"]  # no inline-styled HTML
    assert "end of reply" in markdown


def test_a_prompt_holding_fences_stays_one_block_in_elelem_markdown(tmp_path):
    import importlib.metadata

    exporters = importlib.metadata.entry_points(group="nbconvert.exporters")
    assert "elelem-markdown" in exporters.names, (
        "the installed elelem-kernel predates its nbconvert entry point: "
        "reinstall it (bash scripts/setup.sh test)"
    )
    check_fences(nbconvert(elelem_notebook(tmp_path / "ask.ipynb"), "--to", "elelem-markdown"))


def test_a_reply_cut_off_in_a_code_block_leaves_the_rest_of_the_page_outside_it(tmp_path):
    nb = nbformat.v4.new_notebook()
    cut = nbformat.v4.new_code_cell("%%elelem\nshow code")
    data, meta = bundle({"reply": "Here:\n\n````python\nx = 1", "stop": "max_tokens"})
    cut.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=meta)]
    nb.cells = [cut, nbformat.v4.new_markdown_cell("# After the turn")]
    nbformat.write(nb, tmp_path / "cut.ipynb")
    markdown = nbconvert(tmp_path / "cut.ipynb", "--to", "elelem-markdown")
    tokens = MarkdownIt("commonmark").parse(markdown)
    assert ("python", "x = 1\n") in [(t.info, t.content) for t in tokens if t.type == "fence"]
    assert "After the turn" in [t.content for t in tokens if t.type == "inline"]


def test_the_quickstart_converts_to_markdown_without_styled_html(tmp_path):
    """The shipped quickstart's turns, as `--to elelem-markdown` writes them: Markdown."""
    shipped = Path(__file__).parents[2] / "notebooks" / "quickstart.ipynb"
    nb = nbformat.read(shipped, as_version=4)
    turns = [o for c in nb.cells for o in c.get("outputs", []) if "elelem" in o.get("metadata", {})]
    assert turns, "the quickstart ships with its turns' outputs"
    path = tmp_path / "quickstart.ipynb"
    path.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    markdown = nbconvert(path, "--to", "elelem-markdown")
    assert "elelem-turn" not in markdown and "style=" not in markdown
    for output in turns:
        assert output["data"]["text/markdown"].strip() in markdown


def test_to_script_of_an_elelem_notebook_needs_nothing_of_elelem_kernel(tmp_path):
    """The kernel names nbconvert's own Markdown exporter, so a shared notebook converts
    with --to script where elelem-kernel is not installed."""
    path = elelem_notebook(tmp_path / "ask.ipynb")
    assert nbconvert(path, "--to", "script") == nbconvert(path, "--to", "markdown")
