"""The elelem-kernel command, run as a real process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from elelem_kernel.agent.context import short
from tests.git import git


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
    git(folder, "init", "-q")
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


@pytest.mark.parametrize("sub", [[], ["ask"], ["chat"], ["providers"], ["files"], ["trust"]])
def test_help(folder, sub):
    r = cli(*sub, "--help", cwd=folder)
    assert r.returncode == 0 and "usage: elelem-kernel" in r.stdout


def test_chat_repl(folder):
    r = cli("chat", "-p", "echo", cwd=folder, input="hello there\n/usage\n")
    assert r.returncode == 0
    assert "hello there" in r.stdout and "1 turn," in r.stdout


MARKER_PLUGIN = 'import os\n\nopen(os.environ["MARKER"], "a").write("loaded\\n")\n'


def skip_lines(r):
    return [line for line in r.stderr.splitlines() if "project plugin" in line]


def test_a_pull_requests_plugin_runs_only_after_trust(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "app")
    plugin = repo / ".agents" / "plugins" / "mark.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(MARKER_PLUGIN)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a pull request adding a plugin")
    marker = tmp_path / "marker"
    env = {"HOME": str(tmp_path / "home"), "MARKER": str(marker)}

    r = cli("review", "-p", "demo", cwd=repo, env=env)
    assert r.returncode in (0, 1), r.stderr
    assert not marker.exists()
    [line] = skip_lines(r)
    assert "(mark.py)" in line and "this folder is not trusted" in line
    r = cli("ask", "-p", "demo", "hi", cwd=repo, input="", env=env)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    [line] = skip_lines(r)
    assert "(mark.py)" in line and f"elelem-kernel trust {repo.resolve()}" in line

    r = cli("trust", cwd=repo, env=env)
    assert r.returncode == 0, r.stderr
    assert f"Trusted {repo.resolve()}" in r.stdout and "- `.agents/plugins/mark.py`" in r.stdout
    r = cli("ask", "-p", "demo", "hi", cwd=repo, input="", env=env)
    assert r.returncode == 0 and skip_lines(r) == [], r.stderr
    assert marker.read_text() == "loaded\n"
    assert "trusted, 1 project file" in cli("trust", "--list", cwd=repo, env=env).stdout

    plugin.write_text(MARKER_PLUGIN + "# changed\n")
    r = cli("review", "-p", "demo", cwd=repo, env=env)
    [line] = skip_lines(r)
    assert "changed since the folder was trusted" in line
    assert marker.read_text() == "loaded\n"

    r = cli("trust", "--revoke", cwd=repo, env=env)
    assert f"Revoked the trust of {repo.resolve()}" in r.stdout
    assert "No folder is trusted yet" in cli("trust", "--list", cwd=repo, env=env).stdout


def test_option_flags_and_env_options_reach_the_request(folder):
    from tests.wire_servers import Round, WireServer

    with WireServer() as wire:
        wire.script("openai", Round(text="one"), Round(text="two"))
        env = {**wire.env("openai"), "ELELEM_OPTIONS": "max_tokens=99,thinking=low"}
        r = cli("ask", "-p", "openai", "-o", "max_tokens=123", "hi", cwd=folder, input="", env=env)
        assert r.returncode == 0, r.stderr
        r = cli("ask", "-p", "openai", "hi", cwd=folder, input="", env=env)
        assert r.returncode == 0, r.stderr
        first, second = (q.body for q in wire.requests if q.method == "POST")
    assert first["max_tokens"] == 123 and first["reasoning_effort"] == "low"
    assert second["max_tokens"] == 99


def test_an_unknown_option_is_an_error_naming_the_known_ones(folder):
    r = cli("ask", "-p", "openai", "--option", "tempreature=0.2", "hi", cwd=folder, input="")
    assert r.returncode == 1
    assert "unknown option for openai: tempreature. Known options: api_key" in r.stderr
    git(folder, "init", "-q")
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "one")
    (folder / "sheep.py").write_text("print('baa baa')\n")
    r = cli("review", "--option", "bogus=1", "-p", "demo", cwd=folder, input="")
    assert r.returncode == 2 and "unknown option for demo: bogus" in r.stderr
    r = cli("chat", "-p", "demo", "-o", "nonsense", cwd=folder, input="")
    assert r.returncode == 1 and "NAME=VALUE" in r.stderr


def test_ask_with_an_llm_model(folder):
    pytest.importorskip("llm_echo")
    env = {"LLM_USER_PATH": str(folder / "llm-home")}
    r = cli(
        "ask",
        "-p",
        "llm",
        "--model",
        "echo",
        "-o",
        "example_bool=true",
        "hi",
        cwd=folder,
        input="",
        env=env,
    )
    assert r.returncode == 0, r.stderr
    reply = json.loads(r.stdout)
    assert reply["prompt"] == "hi" and reply["options"] == {"example_bool": True}
    r = cli("ask", "-p", "llm", "--model", "nope-model", "hi", cwd=folder, input="", env=env)
    assert r.returncode == 1 and 'unknown llm model "nope-model"' in r.stderr


def test_files_lists_git_files_without_running_the_repository_config(folder, tmp_path):
    marker = tmp_path.parent / f"{tmp_path.name}-marker"
    for args in (["init", "-q"], ["add", "-A"], ["config", "core.fsmonitor", f"touch {marker}"]):
        git(folder, *args)
    r = cli("files", cwd=folder, input="")
    assert r.returncode == 0 and "<source>sheep.py</source>" in r.stdout
    assert not marker.exists()


def test_the_context_window_option_sets_the_meter_and_a_bad_one_is_refused(folder):
    r = cli("ask", "-p", "echo", "-o", "context_window=6000", "hi", cwd=folder, input="")
    assert r.returncode == 0, r.stderr
    # the meter is the input tokens echo reported for the request, of the window given; that
    # count comes from what was sent (the system prompt holds the date, machine and paths)
    sent = re.search(r"\bin ([\d,]+) · ", r.stderr)
    assert sent, r.stderr
    assert f"ctx {short(int(sent[1].replace(',', '')))}/6.0k" in r.stderr
    r = cli("ask", "-p", "echo", "-o", "context_window=lots", "hi", cwd=folder, input="")
    assert r.returncode == 1 and "bad context window 'lots'" in r.stderr


def test_files_reads_only_regular_files_inside_the_workspace_and_bounded(folder, tmp_path):
    secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    secret.write_text("TOPSECRET\n")
    (folder / "notes.txt").symlink_to(secret)
    (folder / "zero").symlink_to("/dev/zero")
    os.mkfifo(folder / "pipe")
    (folder / "big.txt").write_text("y" * 1_000_001)
    (folder / "inside.txt").symlink_to(folder / "sheep.py")
    given = ["notes.txt", "/dev/zero", "zero", "pipe", "big.txt", "../x", "inside.txt"]
    r = cli("files", cwd=folder, input="\n".join(given) + "\n")
    assert r.returncode == 0 and "TOPSECRET" not in r.stdout + r.stderr
    assert r.stdout.count("<document ") == 1 and "print('baa')" in r.stdout
    for name in given[:-1]:
        assert f"elelem: skipped {name}:" in r.stderr, name
    assert "outside the workspace" in r.stderr and "over 1,000,000 bytes" in r.stderr
    for args in (["init", "-q"], ["add", "notes.txt", "sheep.py"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)
    r = cli("files", cwd=folder, input="")
    assert "TOPSECRET" not in r.stdout and "<source>sheep.py</source>" in r.stdout
