"""Server processes live exactly as long as their session: CLI, kernel, interrupt, restart."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading

import pytest

from elelem_kernel.assembly.sessions import new_session
from tests.e2e.kernels import frozen, isolated_env, run
from tests.mcp import servers
from tests.mcp.servers import write_config
from tests.scripted import Scripted, call, say

CALLER = '''
import elelem_kernel
from elelem_kernel.events import Provider


class Caller(Provider):
    """Asks the MCP time server for the time, then says what it answered."""

    model = "caller"

    def fetch(self, messages, tools, emit):
        if messages[-1]["role"] == "tool":
            emit({"type": "saying", "text": "the time server answered"})
            emit({"type": "stop", "reason": "end_turn", "truncated": False})
            return
        args = {"timezone": "UTC"}
        emit({"type": "doing", "id": "t1", "name": "mcp__time__get_current_time", "arguments": args})
        emit({"type": "stop", "reason": "tool_use", "truncated": False})


@elelem_kernel.configure
def plugin(config):
    config.provider("caller", lambda model=None, **options: Caller())
'''


def tree_command(marker: str) -> dict:
    """A server that leaves a child behind, marked for the process table.

    The child does not read stdin, so only stopping the server's whole process group
    (not just closing its stdin, which ends the server itself) stops it.
    """
    child = f'sh -c "sleep 600; true" {marker} &'
    line = f"{child} exec {sys.executable} {servers.FLAKY} slow {marker}"
    return {"command": "sh", "args": ["-c", line]}


def test_no_server_process_outlives_the_cli(home, ws):
    marker = f"cli-marker-{os.getpid()}"
    write_config(
        home / ".agents" / "mcp.json",
        {
            "tree": tree_command(marker),
            "time": {"command": servers.python_server("mcp-server-time")},
        },
    )
    env = {**os.environ, "HOME": str(home), "ELELEM_PROVIDER": "echo"}
    out = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "mcp", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "**tree** (stdio)" in out.stdout and "`mcp__tree__wait` (read)" not in out.stdout
    assert "`mcp__tree__wait` (execute)" in out.stdout
    assert servers.running_with(marker) == []
    out = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "ask", "--workspace", str(ws), "hello"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert servers.running_with(marker) == []


def test_an_interrupt_cancels_the_call_and_the_server_stays_usable(home, ws):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    s = new_session("echo", workspace=ws, mode="auto")
    s.facts.provider = Scripted(
        call("mcp__flaky__wait", {"seconds": 60}), call("mcp__flaky__ping"), say("ok")
    )
    running = threading.Event()

    def renderer(event):
        if event.get("type") == "tool_state" and event.get("state") == "running":
            running.set()

    async def interrupted():
        task = asyncio.create_task(s.turn("wait", renderer))
        # the server starts first: seconds, more on a loaded machine; cancel only once it runs
        assert await asyncio.to_thread(running.wait, 120), "the MCP call never started"
        task.cancel()
        return await task

    first = asyncio.run(interrupted())
    assert first.stop == "interrupted"
    [record] = [c for r in first.record["rounds"] for c in r["calls"]]
    assert "interrupted" in record["result"]
    second = s.run("ping")
    [record] = [c for r in second.record["rounds"] for c in r["calls"]]
    assert record["ok"] and "pong" in record["result"]


def test_mcp_restart_stops_the_old_process(home, ws):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    s = new_session("echo", workspace=ws, mode="auto")
    s.facts.provider = Scripted(
        call("mcp__flaky__ping", id="a"), say("1"), call("mcp__flaky__ping", id="b"), say("2")
    )
    first = s.run("one")
    pid = json.loads(first.record["rounds"][0]["calls"][0]["result"])["content"].split()[-1]
    assert "restarted MCP server **flaky**" in s.command("/mcp restart flaky")
    second = s.run("two")
    new_pid = json.loads(second.record["rounds"][0]["calls"][0]["result"])["content"].split()[-1]
    assert new_pid != pid
    import psutil

    assert not psutil.pid_exists(int(pid)) or psutil.Process(int(pid)).status() == "zombie"
    assert "no MCP server named 'nope'" in s.command("/mcp restart nope")


@pytest.mark.kernel
def test_a_kernel_turn_records_the_mcp_call_and_shutdown_stops_the_servers(tmp_path):
    from jupyter_client.manager import start_new_kernel

    from elelem_kernel.cli import install_command

    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    folder = tmp_path / "nb"
    folder.mkdir()
    env = isolated_env(
        folder, JUPYTER_PATH=str(prefix / "share" / "jupyter"), ELELEM_PROVIDER="caller"
    )
    home = tmp_path / "nb-state" / "home"
    marker = f"kernel-marker-{os.getpid()}"
    write_config(
        home / ".agents" / "mcp.json",
        {
            "time": {"command": servers.python_server("mcp-server-time")},
            "tree": tree_command(marker),
        },
    )
    (home / ".agents" / "plugins").mkdir(parents=True)
    (home / ".agents" / "plugins" / "caller.py").write_text(CALLER)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
        km, kc = start_new_kernel(kernel_name="elelem", env=env, cwd=str(folder))
    try:
        reply, msgs = run(kc, "what time is it?")
        assert reply["content"]["status"] == "ok"
        record = frozen(msgs)["metadata"]["elelem"]
        [made] = record["rounds"][0]["calls"]
        assert made["name"] == "mcp__time__get_current_time" and made["ok"], made
        assert "UTC" in made["result"]
        assert record["reply"] == "the time server answered"
        started = servers.descendants_running(km.provisioner.process.pid)
        assert any("mcp-server-time" in line for line in started), started
        assert any("sleep 600" in line for line in started), started
        pids = [
            p.pid
            for p in __import__("psutil")
            .Process(km.provisioner.process.pid)
            .children(recursive=True)
        ]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    import psutil

    alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
    assert alive == []
    assert servers.running_with(marker) == []
