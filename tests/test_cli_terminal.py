"""What the elelem-kernel command writes to a terminal, and how it stops: real processes.

A hostile plugin provider (tests/cli_plugin.py, installed in the test HOME's plugin folder)
sends escape sequences in every kind of text; the command runs on a real pseudo-terminal,
so the bytes asserted are the bytes a terminal would obey.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from elelem_kernel.cli.terminal_approver import QUESTION

HERE = Path(__file__).parent
ESCAPED_SPOOF = "\\x1b[2K\\r$ ls -la; touch marker"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    plugins = tmp_path / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    shutil.copy(HERE / "cli_plugin.py", plugins / "cli_plugin.py")
    return tmp_path


def environment(folder: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("ELELEM_")
    }
    env.update({"HOME": str(folder), "NO_COLOR": "1", "OLLAMA_HOST": "http://127.0.0.1:9"})
    return env


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "elelem_kernel.cli", *args]


class Terminal:
    """The command on a pseudo-terminal that is its controlling terminal (so ^C is SIGINT)."""

    def __init__(self, folder: Path, *args: str):
        self.master, slave = pty.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST  # no \n -> \r\n translation: every byte is the program's
        termios.tcsetattr(slave, termios.TCSANOW, attrs)

        def controlling() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            command(*args),
            cwd=folder,
            env=environment(folder),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            preexec_fn=controlling,
        )
        os.close(slave)
        self.seen = b""

    def read_until(self, text: str, timeout: float = 60) -> bytes:
        """Everything written so far, once `text` was written (fails after `timeout`)."""
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            assert time.monotonic() < deadline, f"no {text!r} in {self.seen!r}"
            self._read(0.2)
        return self.seen

    def finish(self, timeout: float = 60) -> int:
        """Read to the end; the exit code (fails if the process is still running)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        while self._read(0.2):
            pass
        os.close(self.master)
        if self.proc.poll() is None:
            self.proc.kill()
            pytest.fail(f"still running after {timeout} s; it wrote {self.seen!r}")
        return self.proc.returncode

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def _read(self, wait: float) -> bool:
        if not select.select([self.master], [], [], wait)[0]:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            return False
        self.seen += chunk
        return bool(chunk)


def test_escape_sequences_from_the_model_and_tools_are_shown_not_obeyed(folder: Path) -> None:
    term = Terminal(folder, "ask", "-p", "spoof", "--mode", "verify", "hello")
    term.read_until(QUESTION)
    term.write(b"y\n")
    term.read_until("propose_cell")
    term.read_until(QUESTION)
    term.write(b"y\n")
    code = term.finish()
    seen = term.seen.decode("utf-8", errors="replace")
    assert code == 1, seen  # the provider's last round fails
    assert b"\x1b" not in term.seen and b"\x07" not in term.seen and b"\r" not in term.seen
    assert "\u202e" not in seen and "\x9b" not in seen
    # the approval preview shows the escape and the carriage return where they are
    assert f"$ {ESCAPED_SPOOF}" in seen
    assert (folder / "marker").exists()  # what ran is what the person approved
    # reply, thinking, tool names, results, the proposed cell and the error, all visible
    assert seen.count("\\x1b]52;c;") >= 5 and "\\u202egnp.exe\\x9b31m\\r" in seen
    assert "ghost\\x1b[2J" in seen and "provider failed \\x1b]52" in seen
    assert "x = 1  \\x1b]52" in seen


def test_json_lines_stay_json_and_carry_no_raw_control_characters(folder: Path) -> None:
    r = subprocess.run(
        command("ask", "--json", "--yes", "-p", "spoof", "--mode", "verify", "hello"),
        cwd=folder,
        env=environment(folder),
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 1, r.stderr
    lines = r.stdout.decode().splitlines()
    events = [json.loads(line) for line in lines]
    assert all(isinstance(e, dict) and "type" in e for e in events)
    assert "\u202e" not in r.stdout.decode() and b"\x1b" not in r.stdout
    texts = [e.get("text", "") for e in events]
    assert any("\x1b]52;c;" in t and "\u202e" in t for t in texts)  # the data is intact
    assert b"\x1b" not in r.stderr and b"\\x1b]52" in r.stderr  # the proposed cell


def propose(folder: Path, *flags: str) -> subprocess.CompletedProcess:
    """`ask` with the proposer model (it proposes one cell), plan mode, `flags` added."""
    return subprocess.run(
        command("ask", *flags, "-p", "proposer", "--mode", "plan", "offer a cell"),
        cwd=folder,
        env=environment(folder),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_propose_cell_with_json_keeps_every_stdout_line_a_json_object(folder: Path) -> None:
    r = propose(folder, "--json")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(isinstance(e, dict) for e in events) and events[-1]["type"] == "turn_end"
    assert "import math\nprint(math.pi)" in r.stderr
    use = next(e for e in events if e.get("block") == "tool_use")
    assert use["arguments"] == {"source": "import math\nprint(math.pi)"}


def test_propose_cell_without_json_prints_the_source(folder: Path) -> None:
    r = propose(folder)
    assert r.returncode == 0, r.stderr
    assert "import math\nprint(math.pi)" in r.stdout and "proposed" in r.stdout


def _wait_for_pid(path: Path, proc: subprocess.Popen, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()):
        assert proc.poll() is None, "the command ended before the tool started"
        assert time.monotonic() < deadline, "the bash tool never started"
        time.sleep(0.05)
    return int(path.read_text())


def _gone(pid: int, timeout: float = 10) -> bool:
    """Whether process `pid` ended (a zombie counts as ended), waiting up to `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def signal_the_sleeper(
    folder: Path, sig: signal.Signals, *args: str
) -> tuple[subprocess.Popen, bytes, bytes, int]:
    """Run `elelem-kernel ARGS` (a turn of the sleeper provider) on pipes and send `sig` once
    its bash tool runs: the ended process, its stdout and stderr, and the tool's pid."""
    proc = subprocess.Popen(
        command(*args),
        cwd=folder,
        env=environment(folder),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        pid = _wait_for_pid(folder / "sleeper.pid", proc)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc, out, err, pid


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_ends_the_turn_and_the_tools_processes(folder: Path, sig, code) -> None:
    proc, out, err, pid = signal_the_sleeper(
        folder, sig, "ask", "-p", "sleeper", "--mode", "auto", "sleep"
    )
    try:
        assert _gone(pid), "the bash tool's sleep is still running"
    finally:
        if not _gone(pid, 0):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == code, err
    assert b"woke up" not in out and b"interrupted" in err


def test_ctrl_c_at_the_approval_prompt_ends_the_turn_without_waiting_for_enter(
    folder: Path,
) -> None:
    term = Terminal(folder, "ask", "-p", "sleeper", "--mode", "verify", "sleep")
    term.read_until(QUESTION)
    term.write(b"\x03")
    assert term.finish(timeout=30) == 130
    assert b"interrupted" in term.seen
    assert not (folder / "sleeper.pid").exists()  # the command was never run


def test_sigterm_at_the_approval_prompt_ends_the_turn(folder: Path) -> None:
    term = Terminal(folder, "ask", "-p", "sleeper", "--mode", "verify", "sleep")
    term.read_until(QUESTION)
    term.proc.send_signal(signal.SIGTERM)
    assert term.finish(timeout=30) == 143
    assert not (folder / "sleeper.pid").exists()


def test_chat_ends_on_a_signal_during_a_turn_and_at_its_prompt(folder: Path) -> None:
    term = Terminal(folder, "chat", "-p", "sleeper", "--mode", "auto")
    term.read_until("› ")
    term.write(b"sleep\n")
    pid = _wait_for_pid(folder / "sleeper.pid", term.proc)
    term.proc.send_signal(signal.SIGTERM)
    assert term.finish(timeout=30) == 143
    assert _gone(pid), "the bash tool's sleep is still running"
    term = Terminal(folder, "chat", "-p", "echo")
    term.read_until("› ")
    term.proc.send_signal(signal.SIGHUP)
    assert term.finish(timeout=30) == 129


def test_sigterm_during_ask_notebook_keeps_the_turn_in_the_notebook(folder: Path) -> None:
    notebook = folder / "talk.ipynb"
    args = ("ask", "--notebook", str(notebook), "-p", "sleeper", "--mode", "auto", "sleep")
    proc, _, err, pid = signal_the_sleeper(folder, signal.SIGTERM, *args)
    assert _gone(pid), "the bash tool's sleep is still running"
    assert proc.returncode == 143, err
    cells = json.loads(notebook.read_text())["cells"]
    records = [c["outputs"][0]["metadata"]["elelem"] for c in cells if c.get("outputs")]
    assert [r["stop"] for r in records] == ["interrupted"]
