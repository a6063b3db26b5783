"""bash: run a shell command in the workspace, bounded in time and output.

The command gets its own session (so its own process group); on timeout or when the turn
is cancelled the whole group is killed, so nothing it started keeps running. Background
processes whose output is redirected away are left alone once the command returns: that
is how a model starts a server on purpose.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from elelem_kernel.text import HeadTail, human_size
from elelem_kernel.tools.bounds import MAX_BYTES
from elelem_kernel.tools.declaration import STRING, Arguments, Result, Tool, ToolContext
from elelem_kernel.tools.workspace import Workspace

DEFAULT_TIMEOUT = 120
#: How long pipes may stay open after the shell exits before the group is stopped.
GRACE = 1.0
_POLL = 0.02


def _environment(root: Path) -> dict[str, str]:
    """The person's environment, with no pager or prompt, and git's search for a
    repository stopped at the workspace's top (`git_command.ceiling`), as for the git tool."""
    env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
    # git_command (its regexes, Repository) only once git runs: not on a turn's path
    from elelem_kernel.tools import git_command

    above = git_command.ceiling(root)
    if above is not None:
        env["GIT_CEILING_DIRECTORIES"] = os.fspath(above)
    return env


async def bash(root: Path, command: str, timeout: float = DEFAULT_TIMEOUT) -> Result:
    """Run `command` with `bash -c` in `root`: exit code, stdout, stderr (head and tail).

    The process is watched by polling rather than through asyncio's child watcher, whose
    `wait()` (before Python 3.12) also waits for pipes that background processes hold.
    """
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=_environment(root),
    )
    end = MAX_BYTES // 4  # each stream keeps MAX_BYTES // 2: a quarter from each end
    out, err = HeadTail(end, end, b""), HeadTail(end, end, b"")
    readers = [_pump(proc.stdout, out), _pump(proc.stderr, err)]
    timed_out = lingering = False
    try:
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            if time.monotonic() > deadline:
                timed_out = True
                kill_group(proc.pid)
                proc.wait()
                break
            await asyncio.sleep(_POLL)
        if not await _joined(readers, GRACE):
            lingering = True
            kill_group(proc.pid)
            await _joined(readers, GRACE)
    except BaseException:
        kill_group(proc.pid)
        proc.wait()
        raise
    return _result(proc.returncode, out, err, timeout if timed_out else None, lingering)


def preview(root: Path, command: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    """What the person approves: the command, where it runs and for how long at most."""
    return f"$ {command}\n(in {root}; killed after {timeout:g} s)"


def kill_group(pid: int, wait: float = 2.0) -> None:
    """SIGKILL the process group led by `pid` and wait (up to `wait` s) until none runs.

    A kill is delivered asynchronously; on a loaded machine a member can still be running
    for a moment after `killpg` returns, so the tool would report a group as stopped while
    part of it still runs.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait
    while _group_running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _group_running(pgid: int) -> bool:
    """Whether a process of group `pgid` is still running (zombies do not count)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return False
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _pump(stream: IO[bytes] | None, sink: HeadTail[bytes]) -> threading.Thread:
    # The reader closes its own pipe: closing it from another thread while a read is
    # blocked (a process that left the group still holds it) would wait on the buffer lock.
    def run() -> None:
        assert stream is not None
        try:
            while chunk := stream.read1(1 << 16):  # type: ignore[attr-defined]
                sink.feed(chunk)
        except (OSError, ValueError):
            pass
        finally:
            stream.close()

    thread = threading.Thread(target=run, name="elelem-bash-output", daemon=True)
    thread.start()
    return thread


async def _joined(threads: list[threading.Thread], wait: float) -> bool:
    """Whether the threads ended within `wait` seconds, without blocking the loop."""
    deadline = time.monotonic() + wait
    while any(t.is_alive() for t in threads):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(_POLL)
    return True


def _result(
    code: int | None,
    out: HeadTail[bytes],
    err: HeadTail[bytes],
    timed_out: float | None,
    lingering: bool,
) -> Result:
    result: Result = {"exit_code": code, "stdout": out.text(), "stderr": err.text()}
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            result["signal"] = signal.Signals(-code).name
    cut = [
        f"{name}: kept the first and last {human_size(sink.head_limit)} of {human_size(sink.total)}"
        for name, sink in (("stdout", out), ("stderr", err))
        if sink.cut
    ]
    if cut:
        result["truncated"] = (
            "; ".join(cut) + ". Redirect the output to a file and use read or grep on it."
        )
    if lingering:
        result["note"] = (
            "background processes still held the command's output after it exited, so its "
            "process group was killed. To keep a process running, redirect its output: "
            "`cmd > out.log 2>&1 &`."
        )
    if timed_out is not None:
        result["error"] = (
            f"timed out after {timed_out:g} s; the command and everything it started were "
            "killed. Pass a larger timeout (seconds), or run it in the background with its "
            "output redirected (`cmd > out.log 2>&1 &`)."
        )
    return result


def definitions(context: ToolContext) -> tuple[Tool, ...]:
    """The `bash` tool, run in the context's workspace root."""

    async def bash_tool(args: Arguments) -> Result:
        root = Workspace(context.workspace).root
        return await bash(root, args["command"], args.get("timeout", DEFAULT_TIMEOUT))

    return (
        Tool(
            "bash",
            "Run a shell command with bash in the workspace root; returns exit code, stdout "
            "and stderr (long output keeps its head and tail). Killed after timeout seconds "
            f"(default {DEFAULT_TIMEOUT}).",
            {"command": STRING, "timeout": {"type": "number", "minimum": 1, "maximum": 3600}},
            bash_tool,
            required=("command",),
            aliases=("exec", "shell"),
            kind="execute",
            preview=lambda a: preview(
                Workspace(context.workspace).root, a["command"], a.get("timeout", DEFAULT_TIMEOUT)
            ),
        ),
    )
