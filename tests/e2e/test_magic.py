"""The %%elelem magic in a real python3 kernel: streaming, freezing, commands, approvals, stop."""

from __future__ import annotations

import json
import time

import pytest
from jupyter_client.manager import start_new_kernel

from tests.e2e.kernels import (
    allow_buttons,
    buttons_shown,
    collect,
    frozen,
    idle,
    isolated_env,
    of,
    reply_to,
    run,
    run_in_cell,
    send_in_cell,
    texts,
    trusted,
    workspace,
)
from tests.git import git

pytestmark = pytest.mark.kernel
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return workspace(tmp_path_factory.mktemp("magic"))


@pytest.fixture(scope="module")
def kernel(folder):
    km, kc = start_new_kernel(
        kernel_name="python3", env=trusted(isolated_env(folder), folder), cwd=str(folder)
    )
    reply, _ = run(kc, "%load_ext elelem_kernel")
    assert reply["content"]["status"] == "ok"
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture
def kc(kernel):
    return kernel[1]


def test_load_ext_imports_nothing_heavy(kc):
    reply, msgs = run(
        kc,
        "import sys\nprint(sorted(m for m in ('httpx', 'ipywidgets', 'mistune', "
        "'elelem_kernel.providers.demo', 'elelem_kernel.agent.session') if m in sys.modules))",
    )
    assert texts(of(msgs, "stream")).strip() == "[]"


def test_a_turn_streams_live_and_freezes_in_place(kc):
    reply, msgs = run_in_cell(kc, "%%elelem -p stream\ngo", "cell-stream")
    assert reply["content"]["status"] == "ok"
    shown = [m for m in of(msgs, "display_data") if WIDGET in m["content"]["data"]]
    assert len(shown) == 1
    display_id = shown[0]["content"]["transient"]["display_id"]
    update = of(msgs, "update_display_data")[-1]["content"]
    assert update["transient"]["display_id"] == display_id
    assert set(update["data"]) == {"text/html", "text/markdown", "text/plain"}
    record = update["metadata"]["elelem"]
    assert record["stop"] == "end_turn" and record["provider"] == "stream"
    assert record["cell"] == "cell-stream"
    assert record["reply"].startswith("w0 w1 ") and "w1999" in record["reply"]
    assert "w1999" in update["data"]["text/html"]
    # 2,000 deltas must not become 2,000 messages
    assert len(of(msgs, "comm_msg")) < 150, len(of(msgs, "comm_msg"))
    assert len(msgs) < 250, len(msgs)
    # the widgets are closed once frozen
    assert of(msgs, "comm_close")


def test_headless_runs_show_the_static_output_only(kc):
    reply, msgs = run(kc, "%%elelem -p echo\nnobody watches", allow_stdin=False)
    assert reply["content"]["status"] == "ok"
    assert not of(msgs, "comm_open", "comm_msg", "update_display_data")
    content = frozen(msgs)
    assert set(content["data"]) == {"text/html", "text/markdown", "text/plain"}
    assert content["metadata"]["elelem"]["reply"] == "nobody watches"


def test_deleted_cells_leave_the_conversation(kc):
    run_in_cell(kc, "%%elelem -p echo\nto be deleted", "cell-doomed")
    show = "import elelem_kernel.jupyter.shell_front as f\nprint([t['cell'] for t in f.front_for(get_ipython()).session.conversation.turns])"
    assert "cell-doomed" in texts(run(kc, show)[1])
    run_in_cell(kc, "%%elelem -p echo\nnext", "cell-next", deletedCells=["cell-doomed"])
    out = texts(run(kc, show)[1])
    assert "cell-doomed" not in out and "cell-next" in out


def test_model_and_tool_html_is_never_live(kc):
    reply, msgs = run_in_cell(kc, "%%elelem -p xss --mode auto\nshow me", "cell-xss")
    assert reply["content"]["status"] == "ok"
    content = frozen(msgs)
    assert "<img" not in content["data"]["text/html"]
    assert "<script" not in content["data"]["text/html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in content["data"]["text/html"]
    for m in of(msgs, "comm_msg", "comm_open"):
        state = json.dumps(m["content"]["data"].get("state", {}))
        assert "<img src=x" not in state and "<script>" not in state


def test_slash_commands_and_status(kc):
    reply, msgs = run(kc, "%elelem /help")
    assert reply["content"]["status"] == "ok"
    assert "/provider" in texts(msgs) and "/mode" in texts(msgs)
    reply, msgs = run(kc, "%elelem")
    out = texts(msgs)
    assert "provider" in out and "mode" in out and "turns" in out and "policy" in out
    reply, msgs = run(kc, "%elelem /nonsense")
    assert "Unknown command" in texts(msgs)


@pytest.mark.parametrize(
    "cell, words",
    [
        ("%%elelem --bogus\nhi", "unrecognized arguments"),
        ("%%elelem -p no-such-provider\nhi", "no-such-provider"),
        ("%%elelem --mode wild\nhi", "unknown mode"),
        ("%%elelem\n", "empty"),  # IPython's own check
        ("%%elelem\n  \n", "write the prompt"),
        ("%%elelem explain\nhi", "unknown subcommand"),
    ],
)
def test_bad_options_are_usage_errors(kc, cell, words):
    reply, msgs = run(kc, cell)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "UsageError"
    assert words in texts(msgs)


def test_headless_approval_falls_to_policy(kc, folder):
    reply, msgs = run(kc, "%%elelem -p toucher\nmake a file", allow_stdin=False)
    assert reply["content"]["status"] == "ok"
    call = frozen(msgs)["metadata"]["elelem"]["rounds"][0]["calls"][0]
    assert call["ok"] is False and "approval is needed" in call["result"]
    assert not (folder / "made.txt").exists()


def test_stdin_approval(kc, folder):
    asked = []

    def answer(msg):
        asked.append(msg["content"]["prompt"])
        kc.input("y")

    reply, msgs = run(kc, "%%elelem -p toucher\nmake a file", allow_stdin=True, stdin_hook=answer)
    assert reply["content"]["status"] == "ok"
    assert asked and "Allow touch" in asked[0]
    call = frozen(msgs)["metadata"]["elelem"]["rounds"][0]["calls"][0]
    assert call["ok"] is True, call
    assert (folder / "made.txt").exists()
    (folder / "made.txt").unlink()


def test_stdin_denial(kc, folder):
    reply, msgs = run(
        kc, "%%elelem -p toucher\nmake a file", allow_stdin=True, stdin_hook=lambda m: kc.input("n")
    )
    call = frozen(msgs)["metadata"]["elelem"]["rounds"][0]["calls"][0]
    assert call["ok"] is False and "declined" in call["result"]
    assert not (folder / "made.txt").exists()


def test_stdin_approval_shows_the_whole_command(kc, folder):
    asked = []

    def answer(msg):
        asked.append(msg["content"]["prompt"])
        kc.input("n")

    reply, msgs = run(
        kc, "%%elelem -p longcmd --mode verify\nrun it", allow_stdin=True, stdin_hook=answer
    )
    assert reply["content"]["status"] == "ok" and len(asked) == 1
    assert "x" * 300 + " && touch end-marker\n  : \\x1b[2K\n" in asked[0]
    assert "\x1b" not in asked[0] and asked[0].endswith("[a]lways for bash: ")
    assert not (folder / "end-marker").exists()


def test_auto_mode_needs_no_approval(kc, folder):
    reply, msgs = run(kc, "%%elelem -p toucher --mode auto\nmake a file")
    assert frozen(msgs)["metadata"]["elelem"]["rounds"][0]["calls"][0]["ok"] is True
    (folder / "made.txt").unlink()


@pytest.fixture
def subshell(kc):
    """A comm subshell, as JupyterLab >= 4.4 opens for widgets."""
    kc.control_channel.send(kc.session.msg("create_subshell_request", {}))
    subshell_id = kc.get_control_msg(timeout=10)["content"]["subshell_id"]
    yield subshell_id
    kc.control_channel.send(kc.session.msg("delete_subshell_request", {"subshell_id": subshell_id}))
    kc.get_control_msg(timeout=10)


def ask_with_buttons(kc):
    """Start a turn that needs approval, from a cell-aware frontend; (msg_id, msgs so far)."""
    request = kc.session.msg(
        "execute_request",
        {
            "code": "%%elelem -p toucher\nmake a file",
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        },
    )
    request["metadata"]["cellId"] = "cell-buttons"
    kc.shell_channel.send(request)
    msg_id = request["header"]["msg_id"]
    return msg_id, collect(kc, msg_id, buttons_shown)


def test_buttons_answer_over_a_comm_subshell(kc, folder, subshell):
    """What JupyterLab >= 4.4 does: comms on a subshell, clicks while the cell runs."""
    msg_id, msgs = ask_with_buttons(kc)
    click = kc.session.msg(
        "comm_msg",
        {
            "comm_id": allow_buttons(msgs)[0]["content"]["comm_id"],
            "data": {"method": "custom", "content": {"event": "click"}},
        },
    )
    click["header"]["subshell_id"] = subshell
    kc.shell_channel.send(click)
    msgs += collect(kc, msg_id, idle)
    assert reply_to(kc, msg_id)["content"]["status"] == "ok"
    record = frozen(msgs)["metadata"]["elelem"]
    assert record["cell"] == "cell-buttons"
    assert record["rounds"][0]["calls"][0]["ok"] is True
    assert (folder / "made.txt").exists()
    (folder / "made.txt").unlink()


def test_stop_while_the_buttons_wait(kernel, folder, subshell):
    km, kc = kernel
    msg_id, msgs = ask_with_buttons(kc)
    km.interrupt_kernel()
    msgs += collect(kc, msg_id, idle)
    assert reply_to(kc, msg_id)["content"]["status"] == "error"
    record = frozen(msgs)["metadata"]["elelem"]
    assert record["stop"] == "interrupted"
    assert "interrupted" in record["rounds"][0]["calls"][0]["result"]
    assert not (folder / "made.txt").exists()


def test_interrupt_mid_stream_keeps_the_partial_reply(kernel):
    km, kc = kernel
    msg_id = send_in_cell(kc, "%%elelem -p slow\nhi")

    def streaming(msgs):
        return any("partial answer" in json.dumps(m["content"]) for m in of(msgs, "comm_msg"))

    msgs = collect(kc, msg_id, streaming)
    km.interrupt_kernel()
    msgs += collect(kc, msg_id, idle)
    reply = reply_to(kc, msg_id)
    assert reply["content"]["status"] == "error"
    assert "interrupted" in texts(of(msgs, "error"))
    record = frozen(msgs)["metadata"]["elelem"]
    assert record["stop"] == "interrupted" and record["reply"] == "partial answer"
    assert "interrupted" in frozen(msgs)["data"]["text/html"]
    # the conversation is consistent and the next prompt works
    reply, msgs = run(kc, "%%elelem -p echo\nagain")
    assert reply["content"]["status"] == "ok"
    assert frozen(msgs)["metadata"]["elelem"]["reply"] == "again"


def test_interrupt_during_an_approval_wait(kernel, folder):
    km, kc = kernel
    msg_id = kc.execute("%%elelem -p toucher\nmake a file", allow_stdin=True)
    kc.get_stdin_msg(timeout=30)  # the question is asked; nobody answers
    time.sleep(0.2)  # let the kernel enter its stdin poll loop
    km.interrupt_kernel()
    msgs = collect(kc, msg_id, idle)
    assert reply_to(kc, msg_id)["content"]["status"] == "error"
    record = frozen(msgs)["metadata"]["elelem"]
    assert record["stop"] == "interrupted"
    assert not (folder / "made.txt").exists()
    reply, msgs = run(kc, "%%elelem -p echo\nstill here")
    assert frozen(msgs)["metadata"]["elelem"]["reply"] == "still here"


def test_review_of_the_uncommitted_changes(kc, folder):
    git(folder, "init", "-q")
    git(folder, "commit", "-q", "--allow-empty", "-m", "0")
    (folder / "calc.py").write_text("def f(x):\n    return x\n")
    git(folder, "add", "calc.py")
    git(folder, "commit", "-q", "-m", "calc")
    (folder / "calc.py").write_text("def f(x):\n    return x / 0\n")
    reply, msgs = run(kc, "%%elelem review calc.py -p demo\nfocus on arithmetic")
    assert reply["content"]["status"] == "ok", texts(msgs)
    content = frozen(msgs)
    (finding,) = content["metadata"]["elelem"]["findings"]
    assert finding["path"] == "calc.py" and finding["line"] == 2
    assert "calc.py:2" in content["data"]["text/html"]
    reply, msgs = run(kc, "%elelem")
    assert "| mode | build |" in texts(msgs)  # the review's plan mode is undone
    # as README documents it, with no cell body: Run All does not stop here
    reply, msgs = run(kc, '%%elelem review calc.py -p demo --focus "division" --severity minor')
    assert reply["content"]["status"] == "ok", texts(msgs)
    (finding,) = frozen(msgs)["metadata"]["elelem"]["findings"]
    assert finding["path"] == "calc.py"


def test_agent_python_shares_the_namespace(kc):
    reply, msgs = run(kc, "%%elelem -p pythoner --mode auto\nset it")
    assert frozen(msgs)["metadata"]["elelem"]["rounds"][0]["calls"][0]["ok"] is True
    assert "99" in texts(run(kc, "print(shared)")[1])


def test_propose_cell_offers_the_next_cell(kc):
    reply, msgs = run(kc, "%%elelem -p proposer\noffer a cell")
    payloads = reply["content"]["payload"]
    assert [p["text"] for p in payloads if p["source"] == "set_next_input"] == ["x = 1  # proposed"]


def test_interrupt_during_a_tool_kills_its_process(kernel, folder):
    km, kc = kernel
    msg_id = send_in_cell(kc, "%%elelem -p napper --mode auto\nnap")

    def running(msgs):  # the card says so: the command has started
        return any("running" in json.dumps(m["content"]) for m in of(msgs, "comm_msg"))

    msgs = collect(kc, msg_id, running)
    # SIGINT goes to the kernel's process group; a command caught between fork and its
    # own setsid() would get it too and end by itself, so let it start first
    time.sleep(0.5)
    km.interrupt_kernel()
    msgs += collect(kc, msg_id, idle)
    assert reply_to(kc, msg_id)["content"]["status"] == "error"
    record = frozen(msgs)["metadata"]["elelem"]
    assert record["stop"] == "interrupted"
    call = record["rounds"][0]["calls"][0]
    assert call["ok"] is False and "interrupted" in call["result"]
    time.sleep(4)  # past the moment the killed command would have finished
    assert not (folder / "late.txt").exists()
    reply, msgs = run(kc, "%%elelem -p echo\nawake")
    assert frozen(msgs)["metadata"]["elelem"]["reply"] == "awake"
