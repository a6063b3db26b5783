"""The execute request as each frontend sends it, read once: what the front learns from it."""

from __future__ import annotations

import pytest
from jupyter_client.session import Session as WireSession

from elelem_kernel.jupyter.execute_request import ExecuteRequest


def header(msg_type="execute_request", **more):
    return {
        "msg_id": "5e3c0a1f-2f6e-4b8e-9a3b-1c2d3e4f5a6b",
        "username": "me",
        "session": "9f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
        "date": "2026-12-05T11:00:00.000Z",
        "msg_type": msg_type,
        "version": "5.3",
        **more,
    }


def content(code="%%elelem\nhello", allow_stdin=True):
    return {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": allow_stdin,
        "stop_on_error": True,
    }


#: JupyterLab 4 and Notebook 7 (which share @jupyterlab/notebook's executor).
JUPYTERLAB = {
    "header": header(),
    "parent_header": {},
    "metadata": {
        "deletedCells": ["0b1a", "77c2"],
        "recordTiming": False,
        "cellId": "6c0f8b2e-1b7a-4a4e-9a53-0e2f3c1d9a11",
    },
    "content": content(),
    "buffers": [],
    "channel": "shell",
}
NOTEBOOK_7 = {**JUPYTERLAB, "metadata": {"recordTiming": False, "cellId": "c9", "deletedCells": []}}
VSCODE = {
    "header": header(),
    "parent_header": {},
    "metadata": {"cellId": "vscode-notebook-cell:/home/me/my%20nb.ipynb#W2sZmlsZQ%3D%3D"},
    "content": content(),
}
#: A request sent on a subshell (JEP 91): the header names it.
ON_A_SUBSHELL = {**JUPYTERLAB, "header": header(subshell_id="a1b2")}


def nbclient_request():
    """What nbclient (papermill, `jupyter execute`) sends: jupyter_client's own message,
    no cell id, stdin refused (nbclient sets `kc.allow_stdin = False`)."""
    return WireSession().msg("execute_request", content("x = 1", allow_stdin=False))


def test_jupyterlab_and_notebook_7_name_the_cell_and_the_deleted_ones():
    request = ExecuteRequest.parse(JUPYTERLAB)
    assert request == ExecuteRequest(
        msg_type="execute_request",
        cell_id="6c0f8b2e-1b7a-4a4e-9a53-0e2f3c1d9a11",
        code="%%elelem\nhello",
        allow_stdin=True,
        deleted_cells=("0b1a", "77c2"),
        subshell_id=None,
        notebook=None,
    )
    notebook = ExecuteRequest.parse(NOTEBOOK_7)
    assert (notebook.cell_id, notebook.deleted_cells, notebook.allow_stdin) == ("c9", (), True)


def test_vscode_names_the_notebook_in_its_cell_id():
    request = ExecuteRequest.parse(VSCODE)
    assert request.cell_id == VSCODE["metadata"]["cellId"]
    assert request.notebook == "/home/me/my nb.ipynb"
    assert request.allow_stdin


def test_nbclient_sends_no_cell_and_refuses_stdin():
    request = ExecuteRequest.parse(nbclient_request())
    assert request.cell_id is None
    assert request.allow_stdin is False
    assert request.code == "x = 1"
    assert request.msg_type == "execute_request"


def test_a_subshell_and_other_messages_are_told_apart():
    assert ExecuteRequest.parse(ON_A_SUBSHELL).subshell_id == "a1b2"
    complete = {"header": header("complete_request"), "content": {"code": "/he", "cursor_pos": 3}}
    assert ExecuteRequest.parse(complete).msg_type == "complete_request"


def test_outside_a_kernel_the_request_is_empty():
    assert ExecuteRequest.parse({}) == ExecuteRequest()
    assert ExecuteRequest.parse(None) == ExecuteRequest()
    assert ExecuteRequest().msg_type == "execute_request"  # a session made here says its lines


@pytest.mark.parametrize(
    "message",
    [
        "not a message",
        ["header", "metadata"],
        {"header": None, "metadata": None, "content": None},
        {"header": "x", "metadata": ["cellId"], "content": 7},
        {"header": {"msg_type": 3, "subshell_id": {}}, "metadata": {"cellId": 42}},
        {"metadata": {"cellId": "", "deletedCells": "0b1a"}, "content": {"code": b"x"}},
        {"metadata": {"cellId": ["a"], "deletedCells": {"a": 1}}},
    ],
)
def test_garbage_reads_as_not_sent(message):
    request = ExecuteRequest.parse(message)
    assert request.cell_id is None
    assert request.deleted_cells == ()
    assert request.code is None
    assert request.subshell_id is None
    assert request.notebook is None
    assert request.msg_type == "execute_request"


def test_deleted_cells_of_other_types_are_read_as_text():
    request = ExecuteRequest.parse({"metadata": {"deletedCells": [1, "b"]}})
    assert request.deleted_cells == ("1", "b")


def test_the_undo_button_speaks_for_its_own_cell():
    request = ExecuteRequest.parse(nbclient_request()).for_cell("6c0f")
    assert request.cell_id == "6c0f"
    assert request.code == "x = 1"  # the rest of the request is kept
    vscode = ExecuteRequest().for_cell(VSCODE["metadata"]["cellId"])
    assert vscode.notebook == "/home/me/my nb.ipynb"


CONSOLE = {"header": header(), "metadata": {}, "content": content()}


@pytest.mark.parametrize(
    ("message", "watcher"),
    [
        (JUPYTERLAB, "widgets"),
        (NOTEBOOK_7, "widgets"),
        (VSCODE, "widgets"),
        (CONSOLE, "text"),
        (nbclient_request(), "nobody"),
        ({"metadata": "garbage", "content": ["allow_stdin"]}, "nobody"),
    ],
)
def test_the_front_reads_who_watches_from_the_request(message, watcher):
    from types import SimpleNamespace

    from elelem_kernel.jupyter.shell_front import ShellFront

    ip = SimpleNamespace(kernel=object(), user_ns={}, get_parent=lambda: message)
    shell_front = ShellFront(ip)
    assert shell_front.watcher(shell_front.request()) == watcher


def test_a_failing_get_parent_is_no_request():
    from types import SimpleNamespace

    from elelem_kernel.jupyter.shell_front import ShellFront

    def broken():
        raise RuntimeError("no parent")

    shell_front = ShellFront(SimpleNamespace(kernel=object(), user_ns={}, get_parent=broken))
    assert shell_front.request() == ExecuteRequest()


def test_a_vscode_request_tells_the_session_which_notebook_is_open(tmp_path, monkeypatch):
    """What VS Code sets only in Python kernels, the front sets from the cell id."""
    from IPython.core.interactiveshell import InteractiveShell

    from elelem_kernel.jupyter import shell_front
    from elelem_kernel.jupyter.restore import VSCODE_FILE

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ELELEM_PROVIDER", "echo")
    shell = InteractiveShell.instance()
    shell_front._FRONTS.pop(shell, None)
    monkeypatch.setattr(shell, "get_parent", lambda: VSCODE, raising=False)
    shell.user_ns.pop(VSCODE_FILE, None)
    try:
        shell_front.front_for(shell).get_session()
        assert shell.user_ns[VSCODE_FILE] == "/home/me/my nb.ipynb"
    finally:  # the shell is the process's one: the next test gets it clean
        shell_front._FRONTS.pop(shell, None)
        shell.user_ns.pop(VSCODE_FILE, None)
