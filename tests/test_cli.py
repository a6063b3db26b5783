"""The elelem-kernel command, run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def cli(*args, cwd, input=None, env=None):
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("ELELEM_")
    }
    clean.update({"HOME": str(cwd), "ELELEM_DEMO_DELAY": "0", "OLLAMA_HOST": "http://127.0.0.1:9"})
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
    )


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "README.md").write_text("# Sample project\n\nIt counts sheep.\n")
    (tmp_path / "sheep.py").write_text("print('baa')\n")
    return tmp_path


def test_ask_demo_in_a_fresh_folder(folder):
    r = cli("ask", "-p", "demo", "what is in this folder?", cwd=folder, input="")
    assert r.returncode == 0, r.stderr
    assert "demo model" in r.stdout and "Sample project" in r.stdout and "sheep.py" in r.stdout
    assert "→ list(" in r.stderr and "→ read(" in r.stderr  # progress goes to stderr when piped


def test_ask_demo_in_a_git_repo_from_a_subfolder(folder):
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    sub = folder / "sub"
    sub.mkdir()
    r = cli("ask", "what is in this folder?", cwd=sub, input="")
    assert r.returncode == 0, r.stderr
    assert "Sample project" in r.stdout  # the workspace is the repository root
    assert "offline demo model" in r.stderr  # the default is announced


def test_json_block_stream(folder):
    r = cli("ask", "--json", "-p", "demo", "what is here?", cwd=folder, input="")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert {e["type"] for e in events} <= {"block_start", "block_delta", "block_stop", "turn_end"}
    assert (
        events[-1]["type"] == "turn_end"
        and events[-1]["stop"] == "end_turn"
        and events[-1]["rounds"] == 2
    )
    starts = [(e["index"], e["block"]) for e in events if e["type"] == "block_start"]
    assert starts == [
        (0, "thinking"),
        (1, "text"),
        (2, "tool_use"),
        (3, "tool_use"),
        (4, "tool_result"),
        (5, "tool_result"),
        (6, "thinking"),
        (7, "text"),
    ]
    uses = [e for e in events if e.get("block") == "tool_use"]
    assert [(u["name"], u["arguments"]) for u in uses] == [
        ("list", {"path": "."}),
        ("read", {"path": "README.md"}),
    ]
    results = [e for e in events if e.get("block") == "tool_result"]
    assert [r["id"] for r in results] == [u["id"] for u in uses] and all(r["ok"] for r in results)
    assert "Sample project" in json.loads(results[1]["content"])["content"]
    assert sorted(e["index"] for e in events if e["type"] == "block_start") == sorted(
        e["index"] for e in events if e["type"] == "block_stop"
    )


def test_piped_stdin_is_appended_in_a_fence(folder):
    r = cli("ask", "-p", "echo", "summarise", cwd=folder, input="line one\nline two\n")
    assert r.returncode == 0
    assert r.stdout.strip() == "summarise\n\n```\nline one\nline two\n```"


def test_unknown_provider_and_missing_key_exit_1(folder):
    r = cli("ask", "-p", "nope", "hi", cwd=folder, input="")
    assert r.returncode == 1 and 'unknown provider: "nope". Available:' in r.stderr
    r = cli("ask", "-p", "anthropic", "hi", cwd=folder, input="")
    assert r.returncode == 1 and "Error:" in r.stderr and "ANTHROPIC_API_KEY" in r.stderr


def test_a_write_without_a_terminal_is_declined_with_advice(folder):
    r = cli("ask", "-p", "demo", "write a file notes.md", cwd=folder, input="")
    assert r.returncode == 0
    assert not (folder / "notes.md").exists()
    assert "--mode auto" in r.stdout or "--mode auto" in r.stderr
    r = cli("ask", "-p", "demo", "--yes", "write a file notes.md", cwd=folder, input="")
    assert (folder / "notes.md").exists() and "I wrote `notes.md`" in r.stdout


def test_providers_and_files(folder):
    r = cli("providers", cwd=folder)
    assert r.returncode == 0 and "demo  (default: no model is configured" in r.stdout
    assert "anthropic" in r.stdout and "ollama" in r.stdout
    r = cli("files", cwd=folder, input="README.md\nsheep.py\n")
    assert r.stdout.startswith('<documents>\n<document index="1">\n<source>README.md</source>')
    assert "print('baa')" in r.stdout and r.stdout.rstrip().endswith("</documents>")


@pytest.mark.parametrize("sub", [[], ["ask"], ["chat"], ["providers"], ["files"]])
def test_help(folder, sub):
    r = cli(*sub, "--help", cwd=folder)
    assert r.returncode == 0 and "usage: elelem-kernel" in r.stdout


def test_chat_repl(folder):
    r = cli("chat", "-p", "echo", cwd=folder, input="hello there\n/usage\n")
    assert r.returncode == 0
    assert "hello there" in r.stdout and "1 turns" in r.stdout


def test_files_lists_git_files_without_running_the_repository_config(folder, tmp_path):
    marker = tmp_path.parent / f"{tmp_path.name}-marker"
    for args in (["init", "-q"], ["add", "-A"], ["config", "core.fsmonitor", f"touch {marker}"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)
    r = cli("files", cwd=folder, input="")
    assert r.returncode == 0 and "<source>sheep.py</source>" in r.stdout
    assert not marker.exists()
