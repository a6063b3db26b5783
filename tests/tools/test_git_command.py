"""A hostile repository: its config names programs; no git call of the tools may run one."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.assembly.workspace_tools import add_workspace_tools
from elelem_kernel.review.review_tools import run_git
from elelem_kernel.review.run import review
from elelem_kernel.review.target import resolve
from elelem_kernel.tools import git_command
from tests.git import git
from tests.scripted import Scripted, call, say

MISSING = "1234567890123456789012345678901234567890"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config, attributes and hooks run a program that leaves a marker."""
    root = tmp_path / "repo"
    root.mkdir()
    marker = tmp_path / "markers"
    marker.mkdir()
    program = tmp_path / "evil"
    program.write_text(f'#!/bin/sh\ntouch "{marker}/$$"\ncat "$@" 2>/dev/null\nexit 0\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n*.md filter=a=b\n")
    (root / "a.txt").write_text("hello\n")
    (root / "b.md").write_text("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    parent = git(root, "rev-parse", "HEAD").strip()
    signed = (
        f"tree {tree}\nparent {parent}\nauthor t <t@example.com> 1 +0000\n"
        "committer t <t@example.com> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n"
        " AAAA\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    made = subprocess.run(
        ["git", "-C", str(root), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=signed.encode(),
        capture_output=True,
        check=True,
    )
    git(root, "update-ref", "HEAD", made.stdout.decode().strip())
    settings = {
        "core.fsmonitor": str(program),
        "core.pager": str(program),
        "pager.log": str(program),
        "diff.external": str(program),
        "diff.evil.textconv": str(program),
        "diff.evil.command": str(program),
        "filter.evil.clean": str(program),
        "filter.evil.smudge": str(program),
        "filter.a=b.clean": str(program),
        "gpg.program": str(program),
        "log.showSignature": "true",
        "core.repositoryformatversion": "1",
        "extensions.partialClone": "origin",
        "remote.origin.promisor": "true",
        "remote.origin.url": f"ext::{program}",
        "protocol.ext.allow": "always",
    }
    for key, value in settings.items():
        git(root, "config", key, value)
    hook = root / ".git" / "hooks" / "post-index-change"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(program.read_text())
    hook.chmod(0o755)
    (root / "a.txt").write_text("hello\nmore\n")
    (root / "b.md").write_text("x\ny\n")
    for name in ("a.txt", "b.md"):
        os.utime(root / name, (1, 1))  # an old stat: git must read the file to compare
    return root, marker


def test_the_hostile_repository_does_run_programs_under_plain_git(hostile):
    root, marker = hostile
    subprocess.run(["git", "-C", str(root), "diff"], capture_output=True)
    subprocess.run(["git", "-C", str(root), "log", "-1"], capture_output=True)
    assert list(marker.iterdir())


def test_list_and_grep_in_plan_mode_run_nothing(hostile):
    root, marker = hostile
    provider = Scripted(
        call("list", {}, id="l"), call("grep", {"pattern": "hello"}, id="g"), say("done")
    )
    session = Session(provider, Toolbox(), workspace=root, mode="plan")
    add_workspace_tools(session.toolbox, session.tool_context)
    session.run("look around", lambda event: None)
    results = [m for m in provider.sent[-1]["messages"] if m["role"] == "tool"]
    assert '"a.txt"' in results[0]["content"] and "a.txt:1:hello" in results[1]["content"]
    assert list(marker.iterdir()) == []


def test_a_review_and_its_git_tool_run_nothing(hostile, monkeypatch, tmp_path):
    root, marker = hostile
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(root.parent / "evil"))
    lines = ["log -1 -p", "show HEAD", f"show {MISSING}", "blame a.txt", "diff", "status"]
    rounds = [call("git", {"args": line}, id=f"g{i}") for i, line in enumerate(lines)]
    provider = Scripted(*rounds, say("done"))
    session = Session(provider, Toolbox(), workspace=root)
    result = review(None, session=session, workspace=root)
    assert (
        result.reviewed == ["a.txt", "b.md"]
        and "+more" in provider.sent[0]["messages"][-1]["content"]
    )
    assert list(marker.iterdir()) == []


def test_the_environment_passes_no_git_variable(monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("git_work_tree", "/elsewhere")
    env = git_command.environment()
    assert "GIT_DIR" not in env and "git_work_tree" not in env
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_ALLOW_PROTOCOL"] == ""


def test_a_folder_made_to_look_like_a_bare_repository_is_not_one(tmp_path):
    fake = tmp_path / "fake"
    (fake / "objects").mkdir(parents=True)
    (fake / "refs").mkdir()
    (fake / "HEAD").write_text("ref: refs/heads/main\n")
    (fake / "config").write_text("[core]\n\tbare = false\n\tworktree = ..\n")
    assert (
        subprocess.run(["git", "-C", str(fake), "rev-parse"], capture_output=True).returncode == 0
    )
    assert git_command.run(fake, "rev-parse").returncode != 0


def test_core_worktree_cannot_point_git_outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.txt").write_text("TOPSECRET\n")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("hello\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "one")
    (root / "s.txt").write_text("harmless\n")
    git(root, "add", "s.txt")
    git(root, "config", "core.worktree", str(outside))
    target = resolve(None, root)
    assert target.root == root.resolve()
    found = [run_git(line, target) for line in ("grep -e TOPSECRET", "diff", "status")]
    assert "TOPSECRET" not in json.dumps(found) and "s.txt" in found[2]["output"]


def test_blame_never_reads_an_ignore_revs_file_outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "secret.txt").write_text("TOPSECRET\n")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("hello\n")
    (root / ".git-blame-ignore-revs").write_text("")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    git(root, "config", "blame.ignoreRevsFile", ".git-blame-ignore-revs")
    target = resolve(None, root)
    assert "hello" in run_git("blame a.txt", target)["output"]
    git(root, "config", "blame.ignoreRevsFile", str(tmp_path / "secret.txt"))
    result = run_git("blame a.txt", target)
    assert "TOPSECRET" not in json.dumps(result) and "blame.ignorerevsfile" in result["error"]
