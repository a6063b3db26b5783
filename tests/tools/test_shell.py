"""bash: real subprocesses, checked against the process table."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest

from elelem_kernel.tools.shell import bash

#: Starts two grandchildren and a child, all sleeping, and records their pids.
SPAWN = "echo $$ > pids; sleep 1000 & echo $! >> pids; sleep 1000 & echo $! >> pids; sleep 1000"


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def group_members(pgid: int) -> list[str]:
    """Live processes of group `pgid` according to ps."""
    table = subprocess.run(["ps", "-eo", "pid=,pgid=,stat="], capture_output=True, text=True).stdout
    return [
        line
        for line in table.splitlines()
        if line.split()[1] == str(pgid) and not line.split()[2].startswith("Z")
    ]


async def pids_written(path: Path, count: int) -> list[int]:
    for _ in range(1000):
        if path.exists() and len(lines := path.read_text().split()) >= count:
            return [int(p) for p in lines]
        await asyncio.sleep(0.01)
    raise AssertionError("the command never wrote its pids")


def test_runs_in_the_workspace_with_exit_code_and_both_streams(root: Path) -> None:
    got = asyncio.run(bash(root, "pwd; echo oops >&2; read x; echo got:$x; exit 3"))
    assert got == {"exit_code": 3, "stdout": f"{root}\ngot:\n", "stderr": "oops\n"}


def test_timeout_kills_the_whole_group(root: Path) -> None:
    got = asyncio.run(bash(root, SPAWN, timeout=1))
    assert "timed out after 1 s" in got["error"] and got["signal"] == "SIGKILL"
    pids = [int(p) for p in (root / "pids").read_text().split()]
    assert len(pids) == 3
    assert not [p for p in pids if alive(p)]
    assert group_members(pids[0]) == []


def test_cancellation_kills_the_whole_group(root: Path) -> None:
    async def scenario() -> list[int]:
        task = asyncio.ensure_future(bash(root, SPAWN))
        pids = await pids_written(root / "pids", 3)
        assert all(alive(p) for p in pids)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pids

    pids = asyncio.run(scenario())
    assert not [p for p in pids if alive(p)]
    assert group_members(pids[0]) == []


def test_long_output_keeps_head_and_tail(root: Path) -> None:
    got = asyncio.run(bash(root, "seq 1 200000"))
    assert got["exit_code"] == 0
    assert got["stdout"].startswith("1\n2\n3\n") and got["stdout"].endswith("199999\n200000\n")
    assert "bytes cut from the middle" in got["stdout"]
    assert len(got["stdout"]) < 26_000
    assert got["truncated"].startswith("stdout: kept the first and last")


def test_background_process_holding_output_is_stopped(root: Path) -> None:
    got = asyncio.run(bash(root, "sleep 1000 & echo $! > bg; echo started"))
    assert got["stdout"] == "started\n" and got["exit_code"] == 0
    assert "background processes" in got["note"]
    assert not alive(int((root / "bg").read_text()))


def test_background_process_with_redirected_output_keeps_running(root: Path) -> None:
    got = asyncio.run(bash(root, "sleep 1000 > /dev/null 2>&1 & echo $!"))
    pid = int(got["stdout"])
    try:
        assert "note" not in got
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_process_that_leaves_the_group_does_not_hang_the_tool(root: Path) -> None:
    got = asyncio.run(bash(root, "setsid sleep 1000 & echo $! > escaped; echo hi"))
    pid = int((root / "escaped").read_text())
    try:
        assert got["stdout"] == "hi\n" and "background processes" in got["note"]
    finally:
        os.kill(pid, signal.SIGKILL)
