"""Workspace: path confinement, root detection, atomic writes, bounded output helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from elelem_kernel.errors import ToolError
from elelem_kernel.text import HeadTail
from elelem_kernel.tools.bounds import unified_diff
from elelem_kernel.tools.listing import files_under
from elelem_kernel.tools.workspace import CEILING, MARKER, Workspace, atomic_write, find_root
from tests.git import git


def test_resolve_keeps_paths_inside(ws: Workspace, root: Path) -> None:
    (root / "sub").mkdir()
    assert ws.resolve("sub/../sub/a.txt") == root / "sub" / "a.txt"
    assert ws.resolve(None) == root
    assert ws.resolve(str(root / "b.txt")) == root / "b.txt"
    assert ws.relative(root / "sub" / "a.txt") == "sub/a.txt"


def test_dotdot_escape_is_refused(ws: Workspace) -> None:
    with pytest.raises(ToolError, match=r"outside the workspace .*'\.\.'"):
        ws.resolve("sub/../../secret.txt")


def test_absolute_path_elsewhere_is_refused(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="outside the workspace .*absolute path"):
        ws.resolve("/etc/passwd")


def test_symlink_out_is_refused(ws: Workspace, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "link").symlink_to(outside)
    (root / "file_link").symlink_to(outside / "secret.txt")
    for path in ("link/secret.txt", "file_link", "link/new.txt"):
        with pytest.raises(ToolError, match="through a symlink"):
            ws.resolve(path)


def test_symlink_inside_is_fine(ws: Workspace, root: Path) -> None:
    (root / "real.txt").write_text("x")
    (root / "alias.txt").symlink_to(root / "real.txt")
    assert ws.resolve("alias.txt") == root / "real.txt"


def test_root_is_the_git_root_or_the_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "notebooks" / "deep").mkdir(parents=True)
    git(repo, "init", "-q")
    assert find_root(repo / "notebooks" / "deep") == repo.resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert Workspace.detect(plain).root == plain.resolve()


def test_atomic_write_replaces_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "f.sh"
    atomic_write(target, b"one")
    assert target.read_bytes() == b"one"
    os.chmod(target, 0o755)
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in target.parent.iterdir()] == ["f.sh"]


def test_head_tail_keeps_both_ends_and_counts_the_cut() -> None:
    sink = HeadTail(50, 50, b"")
    for i in range(1000):
        sink.feed(f"{i:04d}\n".encode())
    text = sink.text()
    assert text.startswith("0000\n0001\n")
    assert text.endswith("0998\n0999\n")
    assert f"{5000 - 100} bytes cut" in text
    small = HeadTail(50, 50, b"")
    small.feed(b"short")
    assert small.text() == "short" and small.cut == 0


def test_unified_diff_marks_new_files_and_cuts() -> None:
    assert unified_diff("", "a\n", "f.txt").startswith("--- /dev/null\n+++ b/f.txt")
    long = unified_diff("", "x\n" * 10_000, "f.txt", limit=100)
    assert long.endswith(" more characters]\n") and len(long) < 200


def test_human_size() -> None:
    from elelem_kernel.text import human_size

    assert [human_size(n) for n in (512, 12_345, 20_000_000, 3_000_000_000)] == [
        "512 B",
        "12.3 KB",
        "20.0 MB",
        "3.0 GB",
    ]


def test_the_ceiling_keeps_the_workspace_below_the_repository(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "notebooks" / "deep").mkdir(parents=True)
    monkeypatch.setenv("ELELEM_WORKSPACE_CEILING", str(repo / "notebooks"))
    assert find_root(repo / "notebooks") == (repo / "notebooks").resolve()
    assert find_root(repo / "notebooks" / "deep") == (repo / "notebooks").resolve()
    assert find_root(repo) == repo.resolve()  # above the ceiling: as before
    (repo / "notebooks" / "deep" / ".git").mkdir()
    assert find_root(repo / "notebooks" / "deep") == (repo / "notebooks" / "deep").resolve()


def test_the_notebooks_folder_is_its_own_workspace_for_every_front(tmp_path):
    """In a clone, "what is in this folder?" lists notebooks/ from a notebook, from
    JupyterLab's terminal and from any shell alike: notebooks/ carries the marker, and no
    environment variable is needed (the saved outputs, made outside git by
    scripts/run_notebooks.py, show the same)."""
    import shutil
    import subprocess
    import sys

    marker = Path(__file__).parents[2] / "notebooks" / MARKER
    assert marker.is_file()
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(marker, notebooks / MARKER)
    (notebooks / "README.md").write_text("# the notebooks\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop(CEILING, None)
    env.update(HOME=str(tmp_path), ELELEM_DEMO_DELAY="0")
    done = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "ask", "-p", "demo", "what is in this folder?"],
        cwd=notebooks,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert "the notebooks" in done.stdout and "pyproject.toml" not in done.stdout, done.stdout


def test_a_marked_folder_is_a_workspace_root(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "notebooks" / "deep").mkdir(parents=True)
    (repo / "notebooks" / MARKER).write_text("")
    assert find_root(repo / "notebooks" / "deep") == (repo / "notebooks").resolve()
    assert find_root(repo) == repo.resolve()
    (repo / "notebooks" / "deep" / "data.csv").write_text("a\n")
    top = (repo / "notebooks").resolve()
    assert files_under(top, top) == ["deep/data.csv"]  # the marker is no content
    (repo / "notebooks" / "deep" / ".git").mkdir()
    assert find_root(repo / "notebooks" / "deep") == (repo / "notebooks" / "deep").resolve()


def test_git_finds_no_repository_above_the_workspace(tmp_path, monkeypatch):
    """The review's `git` tool, listings and the bash tool stop where the workspace does:
    below the ceiling they see no repository, not the clone around it."""
    import asyncio

    from elelem_kernel.tools import git_command
    from elelem_kernel.tools.shell import bash

    repo = tmp_path / "clone"
    repo.mkdir()
    git(repo, "init", "-q")
    notebooks = repo / "notebooks"
    notebooks.mkdir()
    (notebooks / MARKER).write_text("")
    top = git_command.run(notebooks, "rev-parse", "--show-toplevel")
    assert top.returncode != 0 and b"not a git repository" in top.stderr
    assert git_command.work_tree(notebooks) is None
    shell = asyncio.run(bash(notebooks.resolve(), "git rev-parse --show-toplevel"))
    assert shell["exit_code"] != 0 and "not a git repository" in shell["stderr"]
    shop = notebooks / "shop"
    shop.mkdir()
    git(shop, "init", "-q")
    inside = git_command.run(shop, "rev-parse", "--show-toplevel")
    assert inside.stdout.decode().strip() == str(shop.resolve())
    (notebooks / MARKER).unlink()
    monkeypatch.setenv(CEILING, str(notebooks))
    assert git_command.run(notebooks, "rev-parse", "--show-toplevel").returncode != 0
