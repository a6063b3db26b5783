"""Reading MCP configs: formats, merge order, ${VAR} expansion, bad files, trust."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from elelem_kernel.agent.trust import trust
from elelem_kernel.mcp.config import expand, load
from tests.mcp.servers import write_config


def test_var_and_default_expansion(monkeypatch):
    monkeypatch.setenv("MCP_TEST_SET", "yes")
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    environ = {"MCP_TEST_SET": "yes"}
    assert expand("a-${MCP_TEST_SET}-b", environ) == "a-yes-b"
    assert expand("${MCP_TEST_UNSET:-fallback}", environ) == "fallback"
    assert expand("${MCP_TEST_SET:-fallback}", environ) == "yes"
    assert expand("${MCP_TEST_UNSET}", environ) == ""
    assert expand("$HOME and ${not valid}", environ) == "$HOME and ${not valid}"


def test_expansion_in_command_args_env_url_and_headers(home, ws, monkeypatch):
    monkeypatch.setenv("MCP_TEST_BIN", "/opt/bin")
    monkeypatch.setenv("MCP_TEST_TOKEN", "tok-123")
    monkeypatch.delenv("MCP_TEST_PORT", raising=False)
    write_config(
        home / ".agents" / "mcp.json",
        {
            "local": {
                "command": "${MCP_TEST_BIN}/server",
                "args": ["--root", "${MCP_TEST_ROOT:-/data}"],
                "env": {"TOKEN": "${MCP_TEST_TOKEN}"},
            },
            "remote": {
                "type": "http",
                "url": "http://127.0.0.1:${MCP_TEST_PORT:-8080}/mcp",
                "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
            },
        },
    )
    servers, problems = load(ws)
    assert problems == []
    local, remote = servers["local"], servers["remote"]
    assert (local.command, local.args, dict(local.env)) == (
        "/opt/bin/server",
        ("--root", "/data"),
        {"TOKEN": "tok-123"},
    )
    assert remote.url == "http://127.0.0.1:8080/mcp"
    assert dict(remote.headers) == {"Authorization": "Bearer tok-123"}
    assert "tok-123" not in repr(local) + repr(remote)
    assert local.target == "${MCP_TEST_BIN}/server --root ${MCP_TEST_ROOT:-/data}"
    assert remote.target == "http://127.0.0.1:${MCP_TEST_PORT:-8080}/mcp"


def test_later_files_win_and_vscode_format_and_disabled(home, ws):
    trust(ws)
    write_config(home / ".agents" / "mcp.json", {"a": {"command": "home-a"}, "b": {"command": "b"}})
    (ws / ".mcp.json").write_text(json.dumps({"servers": {"a": {"command": "project-a"}}}))
    write_config(ws / ".agents" / "mcp.json", {"b": {"command": "b", "disabled": True}})
    trust(ws)  # the trust hash covers the project files: trust them as they are now
    servers, problems = load(ws)
    assert problems == []
    assert servers["a"].command == "project-a"
    assert servers["a"].source == str(ws / ".mcp.json")
    assert servers["b"].disabled


def test_untrusted_project_servers_are_skipped_with_how_to_trust(home, ws):
    write_config(home / ".agents" / "mcp.json", {"mine": {"command": "mine"}})
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"theirs": {"command": "x"}}}))
    servers, _ = load(ws)
    assert servers["mine"].skipped is None
    assert "elelem-kernel trust" in servers["theirs"].skipped
    trust(ws)
    assert load(ws)[0]["theirs"].skipped is None


def test_a_bad_file_is_one_warning_and_the_others_still_load(home, ws):
    trust(ws)
    (home / ".agents" / "mcp.json").write_text('{"mcpServers": {"a": ')
    write_config(
        ws / ".agents" / "mcp.json",
        {"good": {"command": "ok"}, "bad": {"command": 3}, "worse": {"type": "ftp", "url": "x"}},
    )
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": []}))
    trust(ws)
    servers, problems = load(ws)
    assert list(servers) == ["good"]
    assert len(problems) == 4
    home_file = str(home / ".agents" / "mcp.json")
    assert any(home_file in p and "invalid JSON" in p for p in problems)
    assert any("'bad'" in p and '"command" must be a non-empty string' in p for p in problems)
    assert any("'worse'" in p and '"type" must be one of' in p for p in problems)
    assert any(".mcp.json" in p and "must be an object" in p for p in problems)


def test_a_turn_without_mcp_config_does_not_import_the_sdk(home, ws):
    code = (
        "import sys; from elelem_kernel.assembly.sessions import new_session; "
        f"s = new_session('echo', workspace={str(ws)!r}); s.run('hi'); "
        "print(sorted(m for m in ('mcp', 'elelem_kernel.mcp.hub') if m in sys.modules))"
    )
    env = {**os.environ, "HOME": str(home)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_cli_without_starting_lists_servers_and_bad_files(home, ws):
    write_config(
        home / ".agents" / "mcp.json",
        {
            "a": {"command": "x", "env": {"K": "value-hidden"}},
            "b": {"command": "y", "disabled": True},
        },
    )
    (ws / ".mcp.json").write_text("{broken")
    env = {**os.environ, "HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "mcp", "--no-start", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 1, out.stderr  # the bad file
    assert "**a** (stdio)" in out.stdout and "not started" in out.stdout
    assert "**b** (stdio)" in out.stdout and ": disabled" in out.stdout
    assert "env/headers set (values hidden): K" in out.stdout
    assert "value-hidden" not in out.stdout
    assert "warning: MCP config" in out.stdout and "invalid JSON" in out.stdout


def test_stdio_servers_run_in_the_workspace_or_their_cwd_inside_it(home, ws, tmp_path):
    write_config(
        home / ".agents" / "mcp.json",
        {
            "a": {"command": "x"},
            "b": {"command": "y", "cwd": "sub"},
            "c": {"command": "z", "cwd": str(tmp_path)},
        },
    )
    servers, _ = load(ws)
    assert servers["a"].cwd == str(ws)
    assert servers["b"].cwd == str(ws / "sub")
    assert servers["c"].cwd == str(tmp_path)


def test_an_untrusted_project_entry_never_replaces_the_persons_server(home, ws):
    write_config(home / ".agents" / "mcp.json", {"git": {"command": "my-git-server"}})
    write_config(ws / ".mcp.json", {"git": {"command": "their-server"}, "new": {"command": "n"}})
    write_config(ws / ".agents" / "mcp.json", {"git": {"command": "third"}})
    servers, _ = load(ws)
    assert servers["git"].command == "my-git-server" and servers["git"].skipped is None
    assert servers["new"].skipped
    trust(ws)  # once trusted, the project's entry is the one that counts, as before
    assert load(ws)[0]["git"].command == "third"
