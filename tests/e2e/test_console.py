"""jupyter console, the text client: a turn arrives as text, `%%py` cells wait for the end.

The console sends `allow_stdin` without a cell id and ignores `update_display_data`; it
prints `stream` text and the text/plain of `display_data`. Driven through a real pty.
"""

from __future__ import annotations

import re
import sys

import pytest

from elelem_kernel.cli import install_command
from tests.e2e.kernels import isolated_env

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("jupyter_console")

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefix")
    assert install_command.main(["--prefix", str(root)]) == 0
    return root


def console(prefix, folder, kernel: str):
    env = isolated_env(folder, JUPYTER_PATH=str(prefix / "share" / "jupyter"))
    child = pexpect.spawn(
        sys.executable,
        ["-m", "jupyter_console", "--kernel", kernel],
        env={**env, "TERM": "xterm"},
        cwd=str(folder),
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
    )
    child.expect(prompt(1))
    return child


ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def prompt(count: int) -> str:
    """The console's `In [count]` prompt, which prompt_toolkit colours in pieces."""
    colour = r"(?:\x1b\[[0-9;]*m)*"
    return rf"In \[{colour}{count}{colour}\]"


def ask(child, *lines: str, count: int) -> str:
    """Type `lines` (Enter after each), wait for `In [count]`, return the printed text."""
    for line in lines:
        child.send(line + "\r")
    child.expect(prompt(count))
    return ANSI.sub("", child.before)


def quit_console(child):
    child.sendeof()
    child.expect(r"\(\[y\]/n\)\?")
    child.sendline("y")
    child.expect(pexpect.EOF)


def test_the_elelem_kernel_answers_as_text_and_py_cells_wait_for_an_empty_line(prefix, tmp_path):
    child = console(prefix, tmp_path, "elelem")
    try:
        out = ask(child, "hello from the console", count=2)
        assert "VBox(" not in out and "waiting for" not in out
        # streamed as it came, then the frozen turn's text/plain with its footer
        assert out.count("hello from the console") >= 2
        assert "1 round" in out and "echo" in out
        out = ask(child, "%%py", "x = 41 + 1", "", "", count=3)
        assert "Error" not in out
        out = ask(child, "%%py", "print(x * 10)", "", "", count=4)
        assert "420" in out
    finally:
        if child.isalive():
            quit_console(child)


def test_the_magic_in_a_python_console_answers_as_text(prefix, tmp_path):
    child = console(prefix, tmp_path, "python3")
    try:
        ask(child, "%load_ext elelem_kernel", count=2)
        out = ask(child, "%%elelem", "a question in a python console", "", "", count=3)
        assert "VBox(" not in out
        assert out.count("a question in a python console") >= 2
        assert "1 round" in out
    finally:
        if child.isalive():
            quit_console(child)


def test_markdown_reads_as_text_and_a_backslash_continues_the_prompt(prefix, tmp_path):
    child = console(prefix, tmp_path, "elelem")
    try:
        out = ask(child, "/help", count=2)
        assert "end a line with" in out and "/review" in out
        # the echo model repeats the prompt: Markdown in, text out
        out = ask(
            child, "**bold** and `code` \\", "| a | b |", "|---|---|", "| 1 | 22 |", "", count=3
        )
        reply = out.replace("\r", "").rsplit("| 1 | 22 |", 1)[-1]  # after the typed lines
        assert "bold and code" in reply and "**" not in reply and "`" not in reply
        assert "\\" not in reply and "|" not in reply
        assert re.search(r"a\s+b\n-+\s+-+\n1\s+22", reply), reply
    finally:
        if child.isalive():
            quit_console(child)
