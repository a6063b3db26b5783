"""Writes into plugin and MCP config locations: asked every time, in every mode but auto."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from elelem_kernel.agent.approval import Policy
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.assembly.workspace_tools import add_workspace_tools
from elelem_kernel.tools.protected import startup_code
from elelem_kernel.tools.workspace import Workspace
from tests.scripted import Scripted, call, say

SENSITIVE = [".mcp.json", ".agents/plugins/p.py", "sub/.agents/mcp.json", ".AGENTS/x.py"]
#: Files another program runs when it starts: the next `python`, `ipython`, `jupyter`, shell.
RUN_AT_START = [
    ".venv/lib/python3.11/site-packages/evil.pth",
    "env/Lib/Site-Packages/x.pth",
    "sitecustomize.py",
    "src/usercustomize.py",
    ".ipython/profile_default/startup/00-x.py",
    ".ipython/profile_default/ipython_config.py",
    "jupyter_server_config.py",
    "sub/jupyter_notebook_config.json",
    "ipython_kernel_config.py",
    ".jupyter/custom/custom.js",
    ".envrc",
    ".husky/pre-commit",
    ".githooks/post-checkout",
    ".pre-commit-config.yaml",
    ".bashrc",
    ".gitconfig",
]


class Answer:
    """An approver that records what it was asked and always gives the same answer."""

    def __init__(self, decision: str):
        self.decision = decision
        self.asked: list = []

    def approve(self, request):
        self.asked.append(request)
        return self.decision


def writes(*paths: str) -> Scripted:
    rounds = []
    for i, path in enumerate(paths):
        rounds.append(call("write", {"path": path, "content": "print(1)\n"}, id=f"w{i}"))
    return Scripted(*rounds, say("done"))


def session_for(root: Path, provider: Scripted, **kw) -> Session:
    session = Session(provider, Toolbox(), workspace=root, **kw)
    add_workspace_tools(session.toolbox, session.tool_context)
    return session


def results(provider: Scripted) -> list[dict]:
    found = []
    for sent in provider.sent:
        for m in sent["messages"]:
            if m["role"] == "tool" and m not in found:
                found.append(m)
    return [json.loads(m["content"]) for m in found]


@pytest.mark.parametrize("path", SENSITIVE + RUN_AT_START)
def test_always_does_not_cover_a_startup_file(tmp_path, path):
    approver = Answer("always")
    provider = writes("a.txt", "b.txt", path, path)
    session = session_for(tmp_path, provider, approver=approver)
    session.run("write", lambda event: None)
    asked = [r.arguments["path"] for r in approver.asked]
    assert asked == ["a.txt", path, path]
    assert "can run code when" in approver.asked[1].preview
    assert approver.asked[1].sensitive and not approver.asked[0].sensitive
    assert all(r["ok"] for r in results(provider))


def test_allow_by_name_and_policies_do_not_cover_a_startup_file(tmp_path):
    for approver in (Policy(yes=True), Policy(allow=["write"]), None):
        provider = writes("a.txt", ".mcp.json")
        session = session_for(tmp_path, provider, approver=approver, allow=["write"])
        session.run("write", lambda event: None)
        plain, startup = results(provider)
        assert plain["ok"] and not startup["ok"], approver
        assert "can run code when elelem starts" in startup["error"]
    assert not (tmp_path / ".mcp.json").exists()


def test_a_person_says_yes_and_auto_mode_writes_without_asking(tmp_path):
    approver = Answer("allow")
    session = session_for(tmp_path, writes(".mcp.json"), approver=approver)
    session.run("write", lambda event: None)
    assert len(approver.asked) == 1 and (tmp_path / ".mcp.json").exists()
    approver = Answer("deny")
    session = session_for(tmp_path, writes(".agents/plugins/p.py"), approver=approver, mode="auto")
    session.run("write", lambda event: None)
    assert approver.asked == [] and (tmp_path / ".agents/plugins/p.py").exists()


def test_edit_and_notebook_edit_of_a_startup_file_are_asked_too(tmp_path):
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "mcp.json").write_text("{}\n")
    approver = Answer("always")
    provider = Scripted(
        call("edit", {"path": ".agents/mcp.json", "old": "{}", "new": "{ }"}, id="e1"),
        call("edit", {"path": ".agents/mcp.json", "old": "{ }", "new": "{}"}, id="e2"),
        say("done"),
    )
    session = session_for(tmp_path, provider, approver=approver)
    session.run("edit", lambda event: None)
    assert len(approver.asked) == 2
    assert session.toolbox.get("notebook_edit").caution({"path": ".agents/x.ipynb"})


def test_startup_code_sees_through_symlinks_and_case(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / ".agents" / "plugins").mkdir(parents=True)
    (tmp_path / "innocent").symlink_to(tmp_path / ".agents" / "plugins")
    assert startup_code(ws, "innocent/p.py")
    assert startup_code(ws, "deep/.Agents/plugins/p.py")
    assert startup_code(ws, "x/.MCP.json")
    assert startup_code(ws, "agents/p.py") is None and startup_code(ws, "mcp.json") is None


def test_files_run_at_start_are_told_from_ordinary_ones(tmp_path):
    ws = Workspace(tmp_path)
    for path in RUN_AT_START:
        assert "can run code when" in (startup_code(ws, path) or ""), path
    (tmp_path / "venv").mkdir()
    assert startup_code(ws, "venv/bin/python") is None
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert "virtual environment" in (startup_code(ws, "venv/bin/python") or "")
    assert "virtual environment" in (startup_code(ws, "venv/bin/activate") or "")
    ordinary = ["a.txt", "notes.pth", "site.py", "src/jupyter.py", "bin/tool", "config.json"]
    assert [startup_code(ws, path) for path in ordinary] == [None] * len(ordinary)


def test_the_folder_the_repository_runs_hooks_from_is_asked_too(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "core.hooksPath", "tools/hooks"], cwd=tmp_path, check=True)
    ws = Workspace(tmp_path)
    assert "core.hooksPath" in (startup_code(ws, "tools/hooks/pre-commit") or "")
    assert startup_code(ws, "tools/other.py") is None


#: Start-up files of the person's other programs, one or more per family, as written when
#: the workspace is the home folder (`~` is that folder).
HOME_STARTUP = {
    "git's own global config and attributes": [
        "~/.config/git/config",
        "~/.config/git/attributes",
        "~/.config/git/ignore",
    ],
    "shells": [
        "~/.bash_aliases",
        "~/.bash_logout",
        "~/.zlogout",
        "~/.kshrc",
        "~/.cshrc",
        "~/.login",
        "~/.xonshrc",
        "~/.inputrc",
        "~/.config/fish/config.fish",
        "~/.config/fish/conf.d/x.fish",
        "~/.config/powershell/Microsoft.PowerShell_profile.ps1",
        "~/.config/direnv/direnvrc",
        "~/.direnvrc",
    ],
    "ssh and gpg": ["~/.ssh/config", "~/.ssh/authorized_keys", "~/.ssh/rc", "~/.gnupg/gpg.conf"],
    "the desktop session": [
        "~/.config/autostart/x.desktop",
        "~/.local/share/applications/x.desktop",
        "~/.xprofile",
        "~/.xsessionrc",
        "~/.pam_environment",
    ],
    "systemd user services": [
        "~/.config/systemd/user/x.service",
        "~/.config/systemd/user/default.target.wants/x.service",
        "~/.config/environment.d/x.conf",
    ],
    "folders on PATH": ["~/.local/bin/git", "~/bin/git"],
    "Jupyter's data and config folders": [
        "~/.local/share/jupyter/kernels/python3/kernel.json",
        "~/.venv/share/jupyter/kernels/x/kernel.json",
        "~/.venv/etc/jupyter/jupyter_server_config.d/x.json",
    ],
    "editors": ["~/.vimrc", "~/.vim/plugin/x.vim", "~/.config/nvim/init.lua", "~/.emacs.d/init.el"],
    "terminals, debuggers and REPLs": [
        "~/.tmux.conf",
        "~/.screenrc",
        "~/.pdbrc",
        "~/.gdbinit",
        "~/.psqlrc",
        "~/.Rprofile",
        "~/.irbrc",
        "~/.julia/config/startup.jl",
    ],
    "package managers and version control": [
        "~/.npmrc",
        "~/.yarnrc.yml",
        "~/.hgrc",
        "~/work/.hg/hgrc",
    ],
    "programs run by file type": ["~/.mailcap", "~/.lessfilter"],
}


@pytest.mark.parametrize("family", sorted(HOME_STARTUP))
def test_start_up_files_of_a_home_folder_workspace_are_not_written_unasked(
    home, monkeypatch, family
):
    home.mkdir()
    paths = HOME_STARTUP[family]
    for path in paths:
        assert "can run code when" in (startup_code(Workspace(home), path) or ""), path
    provider = writes(*paths)
    session = session_for(home, provider, approver=Policy(allow=["write"]), allow=["write"])
    session.run("write", lambda event: None)
    for path, result in zip(paths, results(provider), strict=True):
        assert not result["ok"] and "can run code when" in result["error"], path
        assert not Path(path).expanduser().exists(), path


def test_a_global_git_config_written_unasked_would_run_on_the_next_git_status(
    home, tmp_path, monkeypatch
):
    """The attack itself: `~/.config/git/config` naming a `core.fsmonitor` program; git
    runs it on the next `git status` in any repository. The write is refused unasked."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)  # git reads ~/.config/git/config
    home.mkdir()
    repo = home / "project"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    ran = tmp_path / "fsmonitor-ran"
    config = f"[core]\n\tfsmonitor = touch {ran}; false\n"
    provider = Scripted(
        call("write", {"path": "~/.config/git/config", "content": config}), say("done")
    )
    session = session_for(home, provider, approver=Policy(yes=True), allow=["write"])
    session.run("write", lambda event: None)
    [result] = results(provider)
    assert not result["ok"] and "git runs" in result["error"]
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, check=False)
    assert not ran.exists()


def test_an_ordinary_bin_folder_is_start_up_code_only_in_the_home_folder(home, tmp_path):
    home.mkdir()
    assert "on PATH" in (startup_code(Workspace(home), "bin/tool") or "")
    assert startup_code(Workspace(home / "project"), "bin/tool") is None
    ordinary = ["config/git/x", ".config/gitx/config", "share/doc/x", "applications/x.desktop"]
    assert [startup_code(Workspace(home), p) for p in ordinary] == [None] * len(ordinary)
