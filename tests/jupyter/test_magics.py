from __future__ import annotations

import json
import subprocess
import sys

import pytest
from IPython.core.error import UsageError

HEAVY = (
    "httpx",
    "httpx_sse",
    "ipywidgets",
    "mistune",
    "jsonschema",
    "elelem_kernel.agent.session",
    "mcp",
)

LOAD = f"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "elelem_kernel")
assert "elelem" in ip.magics_manager.magics["cell"], "cell magic missing"
assert "elelem" in ip.magics_manager.magics["line"], "line magic missing"
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def test_load_ext_imports_nothing_heavy(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", LOAD],
        capture_output=True,
        text=True,
        env={"IPYTHONDIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.fixture
def ip(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    from elelem_kernel.jupyter import front

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ELELEM_PROVIDER", "echo")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "elelem_kernel")
    front._FRONTS.pop(shell, None)  # a fresh session for each test
    return shell


def test_terminal_ipython_gets_the_static_output_at_the_end(ip, capsys):
    ip.run_cell_magic("elelem", "", "hello from a terminal")
    out = capsys.readouterr().out
    assert "hello from a terminal" in out and "end_turn · echo" in out


def test_configuration_errors_are_usage_errors(ip, monkeypatch):
    monkeypatch.setenv("ELELEM_PROVIDER", "no-such-provider")
    with pytest.raises(UsageError, match="no-such-provider"):
        ip.run_line_magic("elelem", "")
    with pytest.raises(UsageError, match="no-such-provider"):
        ip.run_line_magic("elelem", "/help")


def test_options_apply_to_one_turn(ip, capsys):
    ip.run_cell_magic("elelem", "-p echo --model m2 --mode plan", "first")
    assert "m2: first" in capsys.readouterr().out
    ip.run_line_magic("elelem", "")
    status = capsys.readouterr().out
    assert "| mode | build |" in status and "| model | default |" in status


def test_new_starts_a_fresh_conversation(ip, capsys):
    from elelem_kernel.jupyter.front import front_for

    ip.run_cell_magic("elelem", "", "one")
    ip.run_cell_magic("elelem", "", "two")
    session = front_for(ip).session
    assert [t["prompt"] for t in session.conversation.turns] == ["one", "two"]
    ip.run_cell_magic("elelem", "--new", "three")
    assert [t["prompt"] for t in session.conversation.turns] == ["three"]
    assert len(session.conversations) == 2


def test_line_magic_prompt_and_review_usage(ip, capsys):
    ip.run_line_magic("elelem", "what's up?")  # a quote is fine: the line is not parsed
    assert "what's up?" in capsys.readouterr().out
    with pytest.raises(UsageError, match="severity"):
        ip.run_line_magic("elelem", "review --severity nonsense")
