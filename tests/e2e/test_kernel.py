"""The Elelem kernel as a real process: install, routing, prompts, commands, completion."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel

from elelem_kernel.cli import install_command
from tests.e2e.kernels import (
    collect,
    frozen,
    idle,
    isolated_env,
    of,
    reply_to,
    run,
    send_in_cell,
    texts,
    trusted,
    workspace,
)

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefix")
    assert install_command.main(["--prefix", str(root)]) == 0
    return root


@pytest.fixture(scope="module")
def kernel(prefix, tmp_path_factory):
    folder = workspace(tmp_path_factory.mktemp("elelem"))
    env = trusted(isolated_env(folder, JUPYTER_PATH=str(prefix / "share" / "jupyter")), folder)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
        km, kc = start_new_kernel(kernel_name="elelem", env=env, cwd=str(folder))
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


@pytest.fixture
def kc(kernel):
    return kernel[1]


def test_install_writes_a_kernelspec_with_this_python(prefix, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
    spec = KernelSpecManager().get_kernel_spec("elelem")
    assert spec.display_name == "Elelem" and spec.language == "elelem"
    assert os.path.samefile(spec.argv[0], sys.executable)
    assert spec.argv[1:3] == ["-m", "elelem_kernel.jupyter"]
    files = set(os.listdir(spec.resource_dir))
    assert {"kernel.json", "logo-32x32.png", "logo-64x64.png", "logo-svg.svg"} <= files


def test_install_help_explains_the_choices(capsys):
    with pytest.raises(SystemExit):
        install_command.main(["--help"])
    out = capsys.readouterr().out
    assert "--user" in out and "--sys-prefix" in out and "--prefix" in out


def test_shipped_kernel_json_is_valid():
    from pathlib import Path

    shipped = Path(install_command.__file__).parents[2] / "kernelspec" / "elelem" / "kernel.json"
    spec = json.loads(shipped.read_text())
    assert spec["argv"][0] == "python"  # jupyter_client swaps in its own interpreter
    assert spec["language"] == "elelem" and "{connection_file}" in spec["argv"]


def test_kernel_info(kc):
    kc.kernel_info()
    info = kc.get_shell_msg(timeout=10)["content"]
    assert info["implementation"] == "elelem"
    assert info["language_info"]["name"] == "elelem"
    assert info["language_info"]["codemirror_mode"] == "markdown"
    assert "every cell is a prompt" in info["banner"]


def test_a_cell_is_a_prompt(kc):
    reply, msgs = run(kc, "what is <b>this</b>?")
    assert reply["content"]["status"] == "ok"
    content = frozen(msgs)
    assert content["metadata"]["elelem"]["reply"] == "what is <b>this</b>?"
    assert content["metadata"]["elelem"]["provider"] == "echo"
    assert "<b>" not in content["data"]["text/html"]


def test_slash_commands(kc):
    reply, msgs = run(kc, "/help")
    assert reply["content"]["status"] == "ok"
    assert "/provider" in texts(msgs)
    reply, msgs = run(kc, "/mode plan\n/mode")
    assert texts(msgs).count("plan") >= 2
    run(kc, "/mode build")


def test_ipython_lines_and_python_cells_share_the_namespace(kc):
    reply, msgs = run(kc, "%%py\nanswer = 41 + 1\nprint('set')")
    assert reply["content"]["status"] == "ok" and "set" in texts(msgs)
    reply, msgs = run(kc, "%who")
    assert "answer" in texts(msgs)
    reply, msgs = run(kc, "!echo from-the-shell")
    assert "from-the-shell" in texts(msgs)
    reply, msgs = run(kc, "%%time\nprint(answer)")
    assert "42" in texts(msgs)
    reply, msgs = run(kc, "%%py\nraise ValueError('bad')")
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "ValueError"


def test_silent_requests_go_straight_to_python(kc):
    msg_id = kc.execute("hidden = 7", silent=True, store_history=False)
    assert reply_to(kc, msg_id)["content"]["status"] == "ok"
    reply, msgs = run(kc, "%%py\nprint(hidden * 6)")
    assert "42" in texts(msgs)


def test_the_agent_python_namespace_is_the_users(kc):
    reply, msgs = run(
        kc,
        "%%py\nimport elelem_kernel.jupyter.shell_front as f\n"
        "print(f.front_for(get_ipython()).get_session().tool_context.namespace is globals())",
    )
    assert "True" in texts(msgs)


def test_slash_completion(kc):
    kc.complete("/pro", 4)
    content = kc.get_shell_msg(timeout=10)["content"]
    assert "/provider" in content["matches"] and content["cursor_start"] == 0
    code = "/mode pl"
    kc.complete(code, len(code))
    content = kc.get_shell_msg(timeout=10)["content"]
    assert "/mode plan" in content["matches"]
    kc.complete("%%py\nimport o", 13)
    assert "os" in kc.get_shell_msg(timeout=10)["content"]["matches"]


def test_history_shows_the_prompt_as_a_magic_cell(kc):
    run(kc, "remember me")
    reply, msgs = run(kc, "%%py\nprint(get_ipython().history_manager.input_hist_raw[-2])")
    assert "%%elelem\nremember me" in texts(msgs)


def test_interrupt_in_the_elelem_kernel(kernel):
    km, kc = kernel
    msg_id = kc.execute("/provider slow")
    reply_to(kc, msg_id)
    msg_id = send_in_cell(kc, "take your time")

    def streaming(msgs):
        return any("partial answer" in json.dumps(m["content"]) for m in of(msgs, "comm_msg"))

    msgs = collect(kc, msg_id, streaming)
    km.interrupt_kernel()
    msgs += collect(kc, msg_id, idle)
    assert reply_to(kc, msg_id)["content"]["status"] == "error"
    assert frozen(msgs)["metadata"]["elelem"]["stop"] == "interrupted"
    run(kc, "/provider echo")
    reply, msgs = run(kc, "after the stop")
    assert frozen(msgs)["metadata"]["elelem"]["reply"] == "after the stop"


def regex_children(pid: int) -> list[int]:
    """Children of process `pid` running grep's Python regex engine."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if parent == pid and b"pyregex" in f.read():
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return found


def ignores_sigint(pid: int) -> bool:
    """Whether process `pid` ignores SIGINT: grep's engine does once it is matching."""
    try:
        with open(f"/proc/{pid}/status") as f:
            ignored = next(line for line in f if line.startswith("SigIgn:"))
    except (OSError, StopIteration):
        return False
    return bool(int(ignored.split()[1], 16) & (1 << (signal.SIGINT - 1)))


@pytest.mark.timeout(240)
def test_interrupt_stops_a_grep_that_backtracks(kernel):
    km, kc = kernel
    run(kc, "%%writefile hostile.txt\n" + "a" * 60 + "b")
    run(kc, "/provider grepper")
    msg_id = kc.execute("find the line")
    pid = km.provisioner.process.pid
    # the marker: grep's engine runs in a child of its own (before the fix it ran in the
    # kernel) and has begun matching (it ignores SIGINT from then on); interrupting earlier
    # could stop the child as it starts, and the turn end before the interrupt lands
    deadline = time.monotonic() + 120
    while not any(ignores_sigint(child) for child in regex_children(pid)):
        assert time.monotonic() < deadline, "grep's Python engine never started its own process"
        time.sleep(0.01)
    km.interrupt_kernel()
    msgs = collect(kc, msg_id, idle, timeout=60)
    assert reply_to(kc, msg_id)["content"]["status"] == "error"
    assert frozen(msgs)["metadata"]["elelem"]["stop"] == "interrupted"
    assert regex_children(pid) == []
    run(kc, "!rm hostile.txt")
    run(kc, "/provider echo")
    reply, msgs = run(kc, "after the stop")
    assert frozen(msgs)["metadata"]["elelem"]["reply"] == "after the stop"


def test_review_cell_outside_a_repository_is_a_clear_error(kc):
    reply, msgs = run(kc, "/review HEAD~1\nlook at error handling")
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "UsageError"
    assert "git" in texts(msgs)


def test_untrusted_plugins_are_skipped_until_trust_in_the_kernel(prefix, tmp_path):
    folder = workspace(tmp_path / "work")  # not trusted; its plugin provides the default
    env = isolated_env(
        folder, JUPYTER_PATH=str(prefix / "share" / "jupyter"), ELELEM_PROVIDER="xss"
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
        km, kc = start_new_kernel(kernel_name="elelem", env=env, cwd=str(folder))
    try:
        # a completion tries to make the session first (and fails): its line waits for a cell
        assert reply_to(kc, kc.complete("/tr", 3))["content"]["matches"] == []
        reply, msgs = run(kc, "show me")
        assert reply["content"]["status"] == "error"
        said = [m for m in of(msgs, "display_data") if "skipped 1 project plugin" in texts([m])]
        assert len(said) == 1  # one line in the cell's output, then the error says why
        out = texts(msgs)
        assert "(fronts_plugin.py)" in out and f"elelem-kernel trust {folder.resolve()}" in out
        assert 'unknown provider: "xss"' in out

        reply, msgs = run(kc, "/trust")
        out = texts(msgs)
        assert f"Trusted {folder.resolve()}" in out and ".agents/plugins/fronts_plugin.py" in out
        assert "New providers" in out and "`xss`" in out

        reply, msgs = run(kc, "show me")
        assert reply["content"]["status"] == "ok"
        record = frozen(msgs)["metadata"]["elelem"]
        assert record["provider"] == "xss" and record["rounds"][0]["calls"][0]["ok"] is True
        assert "skipped" not in texts(msgs)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
