"""Listing the workspace: which files there are (git's view, else a walk) and which are text.

Strings rather than `Path`s and one directory read per folder: this runs over tens of
thousands of files. Every name listed is one the tools may open (confined to the root).
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.workspace import MARKER

#: Bytes from a file's start that tell binary (a NUL among them) from text.
SNIFF_BYTES = 8192


#: Folders skipped when walking a tree outside git: caches and environments, never sources.
NOISE_DIRS = frozenset(
    {
        ".git",
        "__pycache__",
        ".ipynb_checkpoints",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)


class Listing(NamedTuple):
    """The files under a folder, and what a search may read of them folder by folder."""

    #: Sorted `/`-separated names relative to the root (`files_under`).
    names: list[str]
    #: Folders (relative to the root, the root itself left out) that hold nothing but
    #: regular files and subfolders, each with how many regular files it holds: a folder
    #: whose files are all named (`whole_folders`) can be searched as a folder.
    plain: dict[str, int]


def files_under(base: Path, root: Path) -> list[str]:
    """Files under `base` as sorted `/`-separated names relative to `root`.

    Inside a git repository this is git's view (.gitignore respected). Outside git, or when
    git lists nothing there (an ignored folder asked for by name), the tree is walked
    without following symlinked folders, skipping `NOISE_DIRS`. Names that lead out of
    `root` through a symlink (the file or a folder above it) are left out: the list holds
    only what the tools may open. Strings rather than `Path`s, and one directory read per
    folder rather than a stat per file: this runs over tens of thousands of files.
    """
    return list_under(base, root).names


def list_under(base: Path, root: Path) -> Listing:
    """`files_under`, with the folders git listed that hold only regular files (`Listing`)."""
    if base.is_file():
        return Listing([base.relative_to(root).as_posix()], {})
    prefix = "" if base == root else base.relative_to(root).as_posix() + "/"
    folder, top = str(base), str(root)
    found = _git_files(folder, top)
    plain: dict[str, int] = {}
    if found is None:
        names = sorted(_walk_names(folder, top))
    else:
        names, plain = found
    if base == root:  # the root's marker says where the workspace is, as `.git` does
        names = [name for name in names if name != MARKER]
    folders = {(prefix + rel).rstrip("/"): count for rel, count in plain.items()}
    folders.pop("", None)
    return Listing([prefix + name for name in names], folders)


def whole_folders(names: list[str], plain: dict[str, int]) -> tuple[list[str], list[str]]:
    """The folders of `plain` whose regular files are all in `names` (sorted), and the
    names in none of them: searching such a folder, without entering its subfolders or
    following links, reads only named files.

    `names` must be distinct, and those in a folder of `plain` its regular files (as
    `list_under` gives them, in full or filtered): then counting them is enough.
    """
    if not plain:
        return [], names
    parents = [name.rpartition("/")[0] for name in names]
    counts = Counter(parents)
    whole = {folder for folder, count in counts.items() if plain.get(folder) == count}
    if not whole:
        return [], names
    rest = [name for name, parent in zip(names, parents, strict=True) if parent not in whole]
    return sorted(whole), rest


def _git_files(folder: str, top: str) -> tuple[list[str], dict[str, int]] | None:
    """git's files under `folder`, tracked and untracked (.gitignore respected), sorted and
    confined (`_confined`); None outside git, or when git lists none there."""
    # git_command (its regexes, Repository) only once git runs: not on a turn's path
    from elelem_kernel.tools import git_command

    try:
        proc = git_command.popen(
            folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."
        )
    except (OSError, ToolError):
        return None  # no git, or a repository git may not read: the folder is walked
    with proc:
        names = _names(proc)
    if not names:
        return None
    # git lists a conflicted file once per stage; its runs are sorted, so sorting is cheap
    return _confined(folder, top, list(dict.fromkeys(sorted(names))))


def _names(proc: subprocess.Popen[bytes]) -> list[str] | None:
    """The names a git process printed; None when it failed or hung."""
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    if proc.returncode != 0:
        return None
    return [n for n in out.decode("utf-8", "replace").split("\0") if n]


def _confined(folder: str, top: str, names: list[str]) -> tuple[list[str], dict[str, int]]:
    """The `names` (relative to `folder`) that are files, or links to files, inside `top`,
    and the folders holding only regular files and subfolders (`Listing.plain`).

    git's index may name files the work tree no longer has, or has behind a symlink, so
    each folder holding listed names is checked once (`_folder_inside`) and read once,
    keeping its regular files as one set (a listed name costs one lookup) and its other
    entries, which are rare, for a closer look.
    """
    checked: dict[str, bool] = {"": True}
    regular: set[str] = set()
    other: dict[str, os.DirEntry[str]] = {}
    plain: dict[str, int] = {}
    for parent in {name.rpartition("/")[0] for name in names}:
        if not _folder_inside(folder, top, parent, checked):
            continue
        prefix = parent + "/" if parent else ""
        count = _read_folder(os.path.join(folder, parent), prefix, regular, other)
        if count is not None:
            plain[parent] = count
    kept = [n for n in names if n in regular or (n in other and _file_inside(other[n], top))]
    return kept, plain


def _read_folder(
    path: str, prefix: str, regular: set[str], other: dict[str, os.DirEntry[str]]
) -> int | None:
    """Add the folder's regular files to `regular` and its other entries but subfolders
    to `other` (names with `prefix`); how many regular files it holds when it holds
    nothing else but subfolders, else None (None too when it cannot be read)."""
    count, plain = 0, True
    try:
        with os.scandir(path) as it:
            for entry in it:
                if entry.is_file(follow_symlinks=False):
                    regular.add(prefix + entry.name)
                    count += 1
                elif not entry.is_dir(follow_symlinks=False):
                    other[prefix + entry.name] = entry
                    plain = False
    except OSError:
        return None
    return count if plain else None


def _folder_inside(folder: str, top: str, rel: str, checked: dict[str, bool]) -> bool:
    """Whether folder `rel` below `folder` is inside `top`: its parent is, and it is a real
    folder or a symlink resolving inside. Memoised in `checked`: one lstat per folder."""
    if rel in checked:
        return checked[rel]
    parent = rel.rpartition("/")[0]
    path = os.path.join(folder, rel)
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = 0
    ok = _folder_inside(folder, top, parent, checked) and (
        stat.S_ISDIR(mode) or (stat.S_ISLNK(mode) and _under(os.path.realpath(path), top))
    )
    checked[rel] = ok
    return ok


def _file_inside(entry: os.DirEntry[str], top: str) -> bool:
    """Whether the directory entry is a regular file, or a symlink to one inside `top`."""
    if entry.is_file(follow_symlinks=False):
        return True
    if not entry.is_symlink():
        return False
    real = os.path.realpath(entry.path)
    return _under(real, top) and os.path.isfile(real)


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _walk_names(folder: str, top: str) -> list[str]:
    """Files below `folder`, relative to it, without entering symlinked folders or noise."""
    out = []
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(os.path.join(folder, rel)) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in NOISE_DIRS:
                    pending.append(name)
            elif _file_inside(entry, top):
                out.append(name)
    return out


def looks_binary(path: str | bytes | os.PathLike[str], sample: int = SNIFF_BYTES) -> bool:
    """True when the file's first bytes hold a NUL, as git and ripgrep decide.

    Opened without blocking, so a FIFO (refused elsewhere: `regular`) cannot hang it.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return b"\0" in os.read(fd, sample)
    finally:
        os.close(fd)
