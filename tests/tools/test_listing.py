"""Listing for search: which folders hold only files the tools may open, all of them named."""

from __future__ import annotations

import os
from pathlib import Path

from elelem_kernel.tools.listing import list_under, whole_folders
from tests.git import git


def make(root: Path, names: list[str]) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")


def test_a_folder_of_listed_files_and_subfolders_is_whole(root: Path) -> None:
    make(root, ["top.txt", "a/one.txt", "a/.hidden", "a/sub/two.txt", "b/three.txt"])
    git(root, "init", "-q")
    listed = list_under(root, root)
    assert listed.names == ["a/.hidden", "a/one.txt", "a/sub/two.txt", "b/three.txt", "top.txt"]
    # the root is never given whole: its `.git` is no file of the workspace's
    assert whole_folders(listed.names, listed.plain) == (["a", "a/sub", "b"], ["top.txt"])
    assert listed.plain == {"a": 2, "a/sub": 1, "b": 1}


def test_a_folder_with_anything_unlisted_is_not_whole(root: Path, tmp_path: Path) -> None:
    make(root, ["ignored/a.txt", "ignored/b.log", "linked/a.txt", "piped/a.txt", "glob/a.txt"])
    make(root, ["glob/b.py"])
    (root / ".gitignore").write_text("*.log\n")
    (tmp_path / "out.txt").write_text("secret\n")
    (root / "linked" / "out.txt").symlink_to(tmp_path / "out.txt")
    os.mkfifo(root / "piped" / "pipe")
    git(root, "init", "-q")
    listed = list_under(root, root)
    assert "ignored/b.log" not in listed.names and "linked/out.txt" not in listed.names
    folders, rest = whole_folders(listed.names, listed.plain)
    assert folders == ["glob"] and rest == [n for n in listed.names if not n.startswith("glob/")]
    assert whole_folders(["glob/b.py"], listed.plain) == ([], ["glob/b.py"])


def test_a_subfolder_listed_on_its_own_names_its_folders_from_the_root(root: Path) -> None:
    make(root, ["pkg/a.txt", "pkg/deep/b.txt"])
    git(root, "init", "-q")
    listed = list_under(root / "pkg", root)
    assert listed.names == ["pkg/a.txt", "pkg/deep/b.txt"]
    assert whole_folders(listed.names, listed.plain) == (["pkg", "pkg/deep"], [])


def test_outside_git_no_folder_is_whole(root: Path) -> None:
    make(root, ["a/one.txt"])
    listed = list_under(root, root)
    assert whole_folders(listed.names, listed.plain) == ([], ["a/one.txt"])
