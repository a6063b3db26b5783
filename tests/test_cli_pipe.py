"""`elelem-kernel ask ... | head`: a reader that goes away ends the CLI quietly."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest


def piped_to_head(tmp_path, head: str, *args: str) -> tuple[str, str, int]:
    """Run `elelem-kernel ARGS | head HEAD` in a real shell: what head shows, our stderr and
    our exit code."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env = {k: v for k, v in env.items() if not k.startswith("ELELEM_")}
    env.update({"HOME": str(tmp_path), "OLLAMA_HOST": "http://127.0.0.1:9"})
    command = shlex.join([sys.executable, "-m", "elelem_kernel.cli", *args])
    script = f'{command} 2>err.txt </dev/null | head {head}; echo "${{PIPESTATUS[0]}}" >code.txt'
    shown = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    code = int((tmp_path / "code.txt").read_text())
    return shown.stdout, (tmp_path / "err.txt").read_text(), code


@pytest.mark.parametrize(("flags", "head"), [(["--json"], "-n 2"), ([], "-c 12")])
def test_a_closed_stdout_ends_the_turn_quietly(tmp_path, flags, head):
    # the demo streams this reply a word each 50 ms, so head leaves long before it ends
    shown, err, code = piped_to_head(tmp_path, head, "ask", *flags, "-p", "demo", "answer slowly")
    assert shown and "word300" not in shown
    assert "BrokenPipe" not in err and "renderer failed" not in err and "Traceback" not in err
    assert code == 141  # as a Unix tool killed by SIGPIPE: 128 + 13


def test_a_reader_that_stays_gets_everything(tmp_path):
    shown, err, code = piped_to_head(tmp_path, "-n 1000", "ask", "--json", "-p", "demo", "hi")
    assert code == 0, err
    assert '"turn_end"' in shown.splitlines()[-1]
