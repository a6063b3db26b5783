"""What a person sees of MCP servers around a turn: `--json` notices, `/tools` before the
first turn, `elelem-kernel mcp`'s report, and a clean-up that a signal cannot cut short."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

from elelem_kernel.assembly.sessions import new_session
from tests.mcp import servers
from tests.mcp.servers import write_config
from tests.mcp.test_lifecycle import tree_command


def cli(home, ws, *args):
    env = {**os.environ, "HOME": str(home), "ELELEM_PROVIDER": "echo"}
    return subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_json_output_carries_the_notice_of_a_server_that_failed(home, ws):
    write_config(home / ".agents" / "mcp.json", {"broken": {"command": str(ws / "no-such")}})
    out = cli(home, ws, "ask", "--json", "hello")
    events = [json.loads(line) for line in out.stdout.splitlines()]
    notices = [e for e in events if e["type"] == "notice"]
    assert len(notices) == 1 and "broken" in notices[0]["text"]
    assert events[-1]["type"] == "turn_end"


def test_tools_before_the_first_turn_says_why_no_mcp_tool_is_listed(home, ws):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    s = new_session("echo", workspace=ws, mode="auto")
    assert "MCP servers flaky start with the first turn" in s.command("/tools")
    s.run("hello")
    answer = s.command("/tools")
    assert "mcp__flaky__ping" in answer and "start with the first turn" not in answer


def test_the_mcp_report_quotes_argv_and_names_only_logs_that_exist(home, ws):
    spaced = ws / "a folder"
    spaced.mkdir()
    slow = servers.flaky("slow")
    write_config(
        home / ".agents" / "mcp.json",
        {
            "flaky": {**slow, "args": [*slow["args"], str(spaced)]},
            "off": {**slow, "disabled": True},
        },
    )
    out = cli(home, ws, "mcp")
    assert out.returncode == 0, out.stderr
    assert f"'{spaced}'" in out.stdout  # one argument, quoted as a shell would need it
    flaky, off = out.stdout.split("**off**")
    assert "log: `" in flaky and "log:" not in off  # the disabled server never ran


def test_a_signal_during_the_exit_clean_up_waits_until_the_servers_are_stopped(home, ws, tmp_path):
    marker = f"exit-marker-{os.getpid()}"
    write_config(home / ".agents" / "mcp.json", {"tree": tree_command(marker)})
    script = tmp_path / "exiting.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, os, signal
            from elelem_kernel.assembly.sessions import new_session
            from elelem_kernel.mcp.hub import Hub

            session = new_session("echo", workspace={str(ws)!r}, mode="auto")
            asyncio.run(session.mcp.refresh())
            stop_all = Hub.stop_all

            async def signalled(self):
                os.kill(os.getpid(), signal.SIGTERM)  # `kill` while the servers stop
                await asyncio.sleep(0.3)
                await stop_all(self)

            Hub.stop_all = signalled
            print("started", flush=True)
            """
        )
    )
    env = {**os.environ, "HOME": str(home)}
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert "started" in out.stdout, out.stderr
    assert out.returncode == -15  # the signal still ends the program, after the clean-up
    deadline = time.monotonic() + 5
    while servers.running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert servers.running_with(marker) == []
