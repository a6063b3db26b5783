"""What each client is told and sent, through real kernels (issue 30, items 10-15).

Help that lists every command in each front, the decline hint in the words that work
there, `/allow` and `%%elelem --allow`, text clients' streams (coalesced, Markdown as
text, `\\` continuations), and VS Code's cell ids naming the notebook.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from elelem_kernel.cli import install_command
from tests.e2e.kernels import (
    collect,
    idle,
    isolated_env,
    live,
    of,
    run,
    run_in_cell,
    send_in_cell,
    texts,
    trusted,
    workspace,
)

pytestmark = pytest.mark.kernel

NAMES = (
    "import json\n"
    "from elelem_kernel.jupyter.shell_front import front_for\n"
    "print(json.dumps(front_for(get_ipython()).get_session().commands.names()))"
)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefix")
    assert install_command.main(["--prefix", str(root)]) == 0
    return root


def start(prefix: Path, folder: Path, name: str, **extra: str):
    env = trusted(isolated_env(workspace(folder), **extra), folder)
    env["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
        return start_new_kernel(kernel_name=name, env=env, cwd=str(folder))


@pytest.fixture
def elelem(prefix, tmp_path):
    km, kc = start(prefix, tmp_path, "elelem")
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture
def python(prefix, tmp_path):
    km, kc = start(prefix, tmp_path, "python3")
    run(kc, "%load_ext elelem_kernel")
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def streamed(msgs: list[dict]) -> list[str]:
    return [m["content"]["text"] for m in of(msgs, "stream")]


def registered(kc, python_cell: str) -> list[str]:
    _, msgs = run(kc, python_cell + NAMES)
    return json.loads(streamed(msgs)[-1])


# -- /help lists every command (item 11) ---------------------------------------------


def test_help_in_the_elelem_kernel_lists_every_command_and_multi_line_prompts(elelem):
    names = registered(elelem, "%%py\n")
    assert "review" in names and "allow" in names
    _, msgs = run(elelem, "/help")
    shown = texts(msgs)
    missing = [n for n in names if f"/{n}" not in shown]
    assert not missing, shown
    assert "end a line with" in shown  # how to type a prompt of several lines


def test_help_of_the_magic_lists_every_command_and_review_runs_from_a_line(python):
    names = registered(python, "")
    _, msgs = run(python, "%elelem /help")
    shown = texts(msgs)
    assert not [n for n in names if f"/{n}" not in shown], shown
    assert "the body of a `%%elelem` cell" in shown
    _, msgs = run(python, "%elelem /review --severity nonsense")
    shown = texts(msgs)  # a review (here: of no git repository), not an unknown command
    assert "Unknown command" not in shown and ("git" in shown or "severity" in shown), shown


def test_help_of_chat_lists_every_command_and_the_cli_its_turn_commands(tmp_path):
    from elelem_kernel.agent.commands import TURN_COMMANDS
    from elelem_kernel.assembly.sessions import new_session

    env = isolated_env(tmp_path, ELELEM_PROVIDER="echo")
    chat = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "chat"],
        input="/help\n/review --severity major\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    names = new_session("echo", workspace=tmp_path).commands.names()
    assert not [n for n in names if f"/{n}" not in chat.stdout], chat.stdout
    assert "/review: " in chat.stderr and "git" in chat.stderr  # a review, of no repository
    usage = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    ).stdout
    for name, (_, about) in TURN_COMMANDS.items():
        assert f"    {name}" in usage and about.split("(")[0].strip()[:30] in usage


# -- allowing a tool where nobody can be asked (item 10) ------------------------------


def test_a_declined_call_in_the_elelem_kernel_names_slash_allow_which_works(elelem, tmp_path):
    run(elelem, "/provider toucher")
    _, msgs = run(elelem, "make the file")  # no stdin, no cell id: nobody to ask
    shown = texts(msgs)
    assert "/allow touch" in shown and "ELELEM_ALLOW=touch" in shown
    assert "--allow" not in shown
    assert not (tmp_path / "made.txt").exists()
    _, msgs = run(elelem, "/allow nonsense")
    assert "no tool 'nonsense'" in texts(msgs)
    _, msgs = run(elelem, "/allow touch")
    assert "run without asking: `touch`" in texts(msgs)
    run(elelem, "make the file")
    assert (tmp_path / "made.txt").exists()


def test_the_magic_takes_allow_for_one_cell_and_names_it_when_it_declines(python, tmp_path):
    _, msgs = run(python, "%%elelem -p toucher\nmake the file")
    shown = texts(msgs)
    assert "%%elelem --allow touch" in shown and "%elelem /allow touch" in shown
    assert not (tmp_path / "made.txt").exists()
    reply, msgs = run(python, "%%elelem -p toucher --allow nonsense\nmake the file")
    assert "no tool 'nonsense'" in texts(msgs) and not (tmp_path / "made.txt").exists()
    run(python, "%%elelem -p toucher --allow touch\nmake the file")
    assert (tmp_path / "made.txt").exists()
    (tmp_path / "made.txt").unlink()
    run(python, "%%elelem -p toucher\nmake the file")  # only that cell was allowed
    assert not (tmp_path / "made.txt").exists()


def test_elelem_allow_in_the_environment_allows_a_headless_run(prefix, tmp_path):
    km, kc = start(prefix, tmp_path, "elelem", ELELEM_ALLOW="touch")
    try:
        run(kc, "/provider toucher")
        run(kc, "make the file")
        assert (tmp_path / "made.txt").exists()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# -- text clients (item 13) -----------------------------------------------------------


def test_a_text_client_gets_few_stream_messages_for_many_deltas(elelem):
    run(elelem, "/provider stream")
    _, msgs = run(elelem, "go", allow_stdin=True)  # as jupyter console sends it
    text = "".join(streamed(msgs))
    assert "w0 w1" in text and "w1999" in text
    # 2,000 deltas; the live view's pace would send about a dozen a second
    assert len(streamed(msgs)) < 200, len(streamed(msgs))


def test_a_text_client_sees_markdown_as_text_and_no_continuation_backslash(elelem):
    _, msgs = run(elelem, "**bold** and `code` \\\nsecond line\n", allow_stdin=True)
    text = "".join(streamed(msgs))
    assert "bold and code" in text and "**" not in text and "`" not in text
    assert "\\" not in text and "second line" in text
    plain = [m["content"]["data"]["text/plain"] for m in of(msgs, "display_data")][-1]
    assert "bold and code" in plain and "**" not in plain


# -- VS Code names the notebook only in its cell ids (item 15) -----------------------


def test_a_vscode_cell_id_names_the_notebook_to_restore(prefix, tmp_path):
    folder = tmp_path / "my notebooks"
    folder.mkdir()
    path = folder / "analysis.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)
    env = isolated_env(tmp_path / "home-of-cli", ELELEM_PROVIDER="echo")
    done = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "ask", "--notebook", str(path), "PELICAN"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    elsewhere = tmp_path / "kernel-cwd"
    elsewhere.mkdir()
    km, kc = start(prefix, elsewhere, "elelem")
    try:
        # the shape VS Code sends: the cell document's URI, path percent-encoded
        cell = f"vscode-notebook-cell:{quote(str(path))}#W2sZmlsZQ%3D%3D"
        _, msgs = run_in_cell(kc, "and now?", cell)
        # shown live, above the turn, and not saved with the cell (its outputs)
        assert "restored 1 turn" in live(msgs), texts(msgs)
        assert "restored" not in texts(msgs)
        _, msgs = run_in_cell(kc, "/load", cell)
        assert str(path) in texts(msgs)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# -- a cell-aware client without subshells (JupyterLab < 4.4) (item 14) --------------


def test_a_card_says_where_to_answer_before_the_input_box_opens(elelem, tmp_path):
    from elelem_kernel.jupyter.approval_channels import EITHER, IN_THE_BOX

    run_in_cell(elelem, "/provider toucher", "cell-1")
    # a cell id and stdin, as JupyterLab 4.2 sends: it opens no subshell for comms
    msg_id = send_in_cell(elelem, "make the file", "cell-2", allow_stdin=True)
    asked = elelem.get_stdin_msg(timeout=60)
    before = collect(elelem, msg_id, lambda msgs: bool(said(msgs, IN_THE_BOX)))
    first = said(before, EITHER)
    assert first, [m["msg_type"] for m in before]
    assert first[0] < said(before, IN_THE_BOX)[0]  # told at once, then where exactly
    assert "Allow touch" in asked["content"]["prompt"]
    elelem.input("y")
    collect(elelem, msg_id, idle, timeout=60)
    assert (tmp_path / "made.txt").exists()


def said(msgs: list[dict], text: str) -> list[int]:
    """Positions of the comm messages (widget updates) that show `text`."""
    from html import escape

    return [
        i
        for i, m in enumerate(msgs)
        if m["msg_type"] in ("comm_open", "comm_msg")
        and escape(text) in json.dumps(m["content"], ensure_ascii=False)
    ]


def test_a_console_without_a_notebook_hears_nothing_about_restoring(elelem):
    """A console (stdin allowed, no cell id) has no notebook to restore: its first reply is
    the reply, not a warning about ELELEM_NOTEBOOK nobody asked about."""
    _, msgs = run(elelem, "hello", allow_stdin=True)
    assert "hello" in texts(msgs)
    assert "restore" not in texts(msgs) and "ELELEM_NOTEBOOK" not in texts(msgs)
