"""What a repository's git setup may make git read: no submodule, no file outside, no device.

Real git on real repositories: a submodule whose own config names a filter program, repository
config naming FIFOs and files outside, a `.git` file leading to another repository.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from elelem_kernel.errors import ReviewError, ToolError
from elelem_kernel.review.review_tools import run_git
from elelem_kernel.review.target import resolve
from elelem_kernel.tools import git_command
from elelem_kernel.tools.listing import files_under
from tests.git import git


def _program(tmp_path: Path) -> tuple[Path, Path]:
    """A filter program that leaves a marker each time it runs, and the marker folder."""
    markers = tmp_path / "markers"
    markers.mkdir()
    program = tmp_path / "evil"
    program.write_text(f'#!/bin/sh\ntouch "{markers}/$$"\ncat\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program, markers


def _repo(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", "main")
    for name, text in files.items():
        (folder / name).write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "one")
    return folder


@pytest.fixture
def with_submodule(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A superproject with a submodule whose own config defines `filter.evil.clean`, a touched
    file in it that git must re-read, and `.gitmodules` asking to look at it (`ignore=none`)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    program, markers = _program(tmp_path)
    _repo(tmp_path / "sub-origin", {".gitattributes": "* filter=evil\n", "f.txt": "hi\n"})
    root = _repo(tmp_path / "repo", {"a.txt": "hello\n"})
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../sub-origin", "sub")
    git(root, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
    git(root, "commit", "-q", "-am", "sub")
    git(root / "sub", "config", "filter.evil.clean", str(program))
    (root / "a.txt").write_text("hello\nmore\n")
    os.utime(root / "sub" / "f.txt", (1, 1))  # an old stat: git must read the file again
    return root, markers


def test_the_submodule_driver_runs_under_plain_git(with_submodule):
    root, markers = with_submodule
    subprocess.run(["git", "-C", str(root), "status"], capture_output=True, check=True)
    assert list(markers.iterdir())


def test_reviews_listings_and_the_git_tool_never_look_into_a_submodule(with_submodule):
    root, markers = with_submodule
    target = resolve(None, root)
    assert target.label == "uncommitted changes"
    for line in ("status", "diff", "log -p -1", "show HEAD", "grep -e hello"):
        assert "error" not in run_git(line, target), line
    for line in ("diff --ignore-submodules=none", "status --ignore-submodules=dirty"):
        assert "not allowed" in run_git(line, target)["error"]
    assert "sub/f.txt" not in files_under(root, root)
    git_command.run(root, "diff", "HEAD", drivers=True)
    assert list(markers.iterdir()) == []


def test_the_submodule_itself_is_a_repository_git_may_read(with_submodule):
    root, _ = with_submodule
    assert git_command.run(root / "sub", "log", "-1").returncode == 0


@pytest.fixture
def plain(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    root = _repo(tmp_path / "repo", {"a.txt": "hello\n", ".mailmap-here": ""})
    (root / "a.txt").write_text("hello\nmore\n")
    return root


@pytest.mark.parametrize(
    "key", ["core.attributesFile", "diff.orderFile", "core.excludesFile", "mailmap.file"]
)
def test_a_setting_naming_a_fifo_does_not_hang_git(plain, key):
    fifo = plain.parent / "fifo"
    os.mkfifo(fifo)
    git(plain, "config", key, str(fifo))
    target = resolve(None, plain)
    assert "+more" in run_git("diff", target)["output"]
    assert "t" in run_git("log --format=%aN -1", target)["output"]
    assert files_under(plain, plain) == [".mailmap-here", "a.txt"]


def test_a_mailmap_outside_the_repository_is_not_read(plain):
    outside = plain.parent / "outside-mailmap"
    outside.write_text("TOPSECRET <t@example.com>\n")
    git(plain, "config", "mailmap.file", str(outside))
    assert "TOPSECRET" in git(plain, "log", "--format=%aN", "-1")  # plain git reads it
    target = resolve(None, plain)
    assert "TOPSECRET" not in json.dumps(run_git("log --format=%aN -1", target))
    (plain / ".mailmap-here").write_text("Inside Name <t@example.com>\n")
    git(plain, "config", "mailmap.file", ".mailmap-here")
    assert "Inside Name" in run_git("log --format=%aN -1", target)["output"]


def test_file_settings_are_kept_only_for_regular_files_inside(plain):
    git(plain, "config", "core.attributesFile", "/dev/zero")
    git(plain, "config", "diff.orderFile", ".mailmap-here")
    git(plain, "config", "commit.template", str(plain.parent))
    overrides = git_command.settings(plain)
    assert overrides == {"core.attributesfile": os.devnull, "commit.template": os.devnull}


@pytest.mark.parametrize("where", ["fifo", "outside", "dev"])
def test_an_include_git_must_not_read_refuses_every_call(plain, where):
    places = {"fifo": plain.parent / "fifo", "outside": plain.parent / "x", "dev": "/dev/zero"}
    if where == "fifo":
        os.mkfifo(places["fifo"])
    if where == "outside":
        places["outside"].write_text("[user]\n\tname = TOPSECRET\n")
    with open(plain / ".git" / "config", "a") as f:
        f.write(f'[includeIf "gitdir:/"]\n\tpath = {places[where]}\n')
    with pytest.raises(ToolError, match="includes"):
        git_command.run(plain, "log", "-1")
    with pytest.raises(ReviewError, match="not a regular file inside the repository"):
        resolve(None, plain)
    assert files_under(plain, plain) == [".mailmap-here", "a.txt"]  # walked instead


def test_an_include_inside_the_repository_is_read(plain):
    (plain / "shared.gitconfig").write_text("[diff]\n\torderFile = /dev/zero\n")
    git(plain, "config", "include.path", "../shared.gitconfig")
    assert git_command.settings(plain) == {"diff.orderfile": os.devnull}
    assert "+more" in run_git("diff", resolve(None, plain))["output"]


def test_a_git_file_leading_to_another_repository_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    other = _repo(tmp_path / "other", {"secret.txt": "TOPSECRET\n"})
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("mine\n")
    (ws / ".git").write_text(f"gitdir: {os.path.relpath(other / '.git', ws)}\n")
    assert "secret.txt" in git(ws, "ls-files")  # plain git reads the other repository
    with pytest.raises(ToolError, match="neither a linked worktree nor a submodule"):
        git_command.run(ws, "log", "-1")
    with pytest.raises(ReviewError, match="outside"):
        resolve(None, ws)
    listed = files_under(ws.resolve(), ws.resolve())
    assert "notes.txt" in listed and "secret.txt" not in listed


def test_a_linked_worktree_is_its_own_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    main = _repo(tmp_path / "main", {"a.txt": "hello\n"})
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    assert git_command.run(tmp_path / "linked", "log", "-1").returncode == 0
    assert files_under(tmp_path / "linked", (tmp_path / "linked").resolve()) == ["a.txt"]
