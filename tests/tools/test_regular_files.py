"""A FIFO in the workspace: every file tool refuses it by name instead of waiting forever."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from elelem_kernel.errors import ToolError
from elelem_kernel.tools import file_tools, notebook_disk
from elelem_kernel.tools.notebook_run import run_notebook
from elelem_kernel.tools.regular_files import open_regular
from elelem_kernel.tools.search import grep
from elelem_kernel.tools.workspace import Workspace

FIFO = r'"pipe(\.ipynb)?" is a FIFO \(named pipe\), not a regular file'


@pytest.fixture
def pipe(root: Path) -> Path:
    (root / "a.txt").write_text("hello\n")
    os.mkfifo(root / "pipe")
    os.mkfifo(root / "pipe.ipynb")
    return root / "pipe"


@pytest.mark.timeout(60)
def test_read_write_and_edit_refuse_a_fifo(ws: Workspace, pipe: Path) -> None:
    with pytest.raises(ToolError, match=FIFO):
        file_tools.read(ws, "pipe")
    with pytest.raises(ToolError, match=FIFO):
        file_tools.edit(ws, "pipe", "a", "b")
    with pytest.raises(ToolError, match=FIFO):
        file_tools.write(ws, "pipe", "text")
    assert "would fail" in file_tools.edit_preview(ws, "pipe", "a", "b")
    assert pipe.exists() and not pipe.is_file()


@pytest.mark.timeout(60)
def test_notebook_tools_refuse_a_fifo(ws: Workspace, pipe: Path) -> None:
    with pytest.raises(ToolError, match=FIFO):
        notebook_disk.read_notebook(ws, "pipe.ipynb")
    with pytest.raises(ToolError, match=FIFO):
        notebook_disk.edit_notebook(ws, "pipe.ipynb", cell=0, source="x")
    with pytest.raises(ToolError, match=FIFO):
        asyncio.run(run_notebook(ws, "pipe.ipynb"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ["auto", "python"])
def test_grep_and_list_pass_a_fifo_by(ws: Workspace, pipe: Path, engine: str) -> None:
    assert grep(ws, "hello", engine=engine)["matches"] == "a.txt:1:hello"
    with pytest.raises(ToolError, match=FIFO):
        grep(ws, "hello", path="pipe", engine=engine)
    assert file_tools.list_files(ws)["files"] == ["a.txt"]


@pytest.mark.timeout(60)
def test_a_fifo_swapped_in_after_the_check_is_refused_too(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from elelem_kernel.tools import regular_files

    os.mkfifo(root / "late")
    (root / "plain.txt").write_text("text")
    monkeypatch.setattr(regular_files, "check_regular", lambda path, rel: None)  # it saw a file
    with pytest.raises(ToolError, match='"late" is a FIFO'):
        open_regular(root / "late", "late")
    with open_regular(root / "plain.txt", "plain.txt") as f:
        assert f.read() == b"text"
