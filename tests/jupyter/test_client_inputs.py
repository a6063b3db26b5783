"""What clients send, read as a person meant it: console continuations, VS Code cell ids,
and where an approval is answered."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from elelem_kernel.agent.approval import ApprovalRequest
from elelem_kernel.jupyter.approval_channels import IN_THE_BOX, StdinApprover
from elelem_kernel.jupyter.execute_request import ExecuteRequest
from elelem_kernel.jupyter.kernel import unwrap


def test_unwrap_drops_the_backslash_that_continued_a_console_line():
    assert unwrap("%%elelem\nfirst \\\nsecond\n") == "%%elelem\nfirst\nsecond\n"
    assert unwrap("a line ending in two \\\\\nnext") == "a line ending in two \\\\\nnext"
    fenced = "run this:\n```bash\nls \\\n  -la\n```\nthanks \\\nbye"
    assert unwrap(fenced) == "run this:\n```bash\nls \\\n  -la\n```\nthanks\nbye"


@pytest.mark.parametrize(
    ("cell", "path"),
    [
        ("vscode-notebook-cell:/home/me/my%20nb.ipynb#W2sZmlsZQ%3D%3D", "/home/me/my nb.ipynb"),
        ("vscode-notebook-cell:/c%3A/Users/me/nb.ipynb#W0sZmlsZQ%3D%3D", "c:/Users/me/nb.ipynb"),
        ("vscode-notebook-cell://ssh-remote%2Bbox/srv/a.ipynb#X1", "/srv/a.ipynb"),
        ("vscode-notebook-cell:Untitled-1.ipynb#W0sdW50aXRsZWQ%3D", None),  # not saved yet
        ("vscode-notebook-cell:/home/me/notes.md#W0", None),  # not a notebook file
        ("6c0f8b2e-1b7a-4a4e-9a53-0e2f3c1d9a11", None),  # JupyterLab's cell ids
        (None, None),
        (["garbage"], None),
    ],
)
def test_a_vscode_cell_id_names_its_notebook(cell, path):
    assert ExecuteRequest.parse({"metadata": {"cellId": cell}}).notebook == path


class View:
    def __init__(self) -> None:
        self.notes: list[tuple[int | None, str | None]] = []

    def note(self, index: int | None, text: str | None) -> None:
        self.notes.append((index, text))


def test_the_input_box_question_is_announced_in_the_card():
    view = View()

    def call_in_main(fn):
        done: concurrent.futures.Future = concurrent.futures.Future()
        done.set_result("a")
        return done

    request = ApprovalRequest("c1", "write", "write", {}, "create x", index=3)
    assert asyncio.run(StdinApprover(call_in_main, view).approve(request)) == "always"
    assert view.notes == [(3, IN_THE_BOX)]
