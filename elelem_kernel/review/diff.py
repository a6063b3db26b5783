"""The diff of a review target, file by file, split into parts that fit a budget.

Text files get git's unified diff; binary files are named, never pasted; deleted files
are named with their size; notebooks are diffed cell by cell (see `notebook`). When the
whole diff is over `budget` characters it is split by file into parts of at most
`budget`; a single file over the budget, and files past `max_parts`, are skipped and
listed with the reason.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TypedDict

from elelem_kernel.review import cell_sources, git
from elelem_kernel.review.target import Target

#: Characters of diff per review part (about 15k tokens).
BUDGET = 60_000
MAX_PARTS = 8
#: Untracked files larger than this are named, not read.
MAX_UNTRACKED = 2_000_000
STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type changed",
}


class Skipped(TypedDict):
    """A file the review left out, and why."""

    path: str
    reason: str


@dataclass
class FileDiff:
    """One changed file as the model sees it."""

    path: str
    status: str
    text: str
    old_path: str | None = None
    binary: bool = False
    skip: str | None = None  #: why this file is never pasted, if it is not
    notebook: bool = False

    @property
    def lines(self) -> int:
        return self.text.count("\n")


@dataclass
class Diff:
    """A target's changes: every file, the parts to review, and what was skipped and why."""

    target: Target
    files: list[FileDiff]
    parts: list[list[FileDiff]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.files

    @property
    def reviewed(self) -> list[str]:
        return [f.path for part in self.parts for f in part]

    def part_text(self, i: int) -> str:
        return "".join(f.text for f in self.parts[i])


def collect(target: Target, budget: int = BUDGET, max_parts: int = MAX_PARTS) -> Diff:
    """Read the target's changes from git and split them by file into parts."""
    files = _tracked(target) + [_untracked(target, p) for p in target.untracked]
    diff = Diff(target, files)
    _split(diff, budget, max_parts)
    return diff


def _spec(target: Target) -> list[str]:
    return ["--", *target.paths] if target.paths else []


def _entries(target: Target) -> list[tuple[str, str | None, str]]:
    raw = git.text(
        target.root, "diff", "--name-status", "-z", "-M", *target.diff_args(), *_spec(target)
    )
    words = raw.split("\0")
    entries: list[tuple[str, str | None, str]] = []
    i = 0
    while i < len(words) and words[i]:
        letter = words[i][0]
        if letter in "RC":
            entries.append((letter, words[i + 1], words[i + 2]))
            i += 3
        else:
            entries.append((letter, None, words[i + 1]))
            i += 2
    return entries


#: `git diff` as the review runs it: no colour, no external diff or textconv drivers
#: (a repository's config must not run programs), renames detected.
DIFF = ("diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M")


def _patches(target: Target) -> list[str]:
    out = git.text(target.root, *DIFF, *target.diff_args(), *_spec(target))
    blocks = out.split("\ndiff --git ")
    return [b if i == 0 else "diff --git " + b for i, b in enumerate(blocks) if b.strip()]


def _tracked(target: Target) -> list[FileDiff]:
    entries = _entries(target)
    patches = _patches(target)
    if len(patches) != len(entries):
        patches = [
            git.text(target.root, *DIFF, *target.diff_args(), "--", *filter(None, (o, p)))
            for _, o, p in entries
        ]
    return [
        _file(target, letter, old, path, patch)
        for (letter, old, path), patch in zip(entries, patches, strict=True)
    ]


def _is_binary_patch(patch: str) -> bool:
    head = patch.split("\n@@", 1)[0]
    return "\nBinary files " in head or "\nGIT binary patch" in head


def _file(target: Target, letter: str, old: str | None, path: str, patch: str) -> FileDiff:
    status = STATUS.get(letter, letter)
    if not patch.endswith("\n"):
        patch += "\n"
    if _is_binary_patch(patch):
        return FileDiff(
            path,
            status,
            f"diff --git a/{path} b/{path}\nbinary file {status}; not shown\n",
            old,
            binary=True,
        )
    if letter == "D":
        removed = patch.count("\n-") - patch.count("\n--- ")
        return FileDiff(
            path,
            status,
            f"diff --git a/{path} b/{path}\nfile deleted ({removed} lines); not shown\n",
            old,
        )
    if path.endswith(".ipynb"):
        nb = _notebook(target, letter, old or path, path)
        if nb is not None:
            return FileDiff(path, status, nb, old, notebook=True)
    return FileDiff(path, status, patch, old)


def new_bytes(target: Target, path: str) -> bytes | None:
    """The reviewed (new) version of `path`: from the working tree or the head commit."""
    if target.head is None:
        file = target.root / path
        return file.read_bytes() if file.is_file() else None
    return git.blob(target.root, target.head, path)


def _notebook(target: Target, letter: str, old_path: str, path: str) -> str | None:
    old = None if letter == "A" else git.blob(target.root, target.base, old_path)
    new = new_bytes(target, path)
    try:
        body, _ = cell_sources.diff(old, new)
    except ValueError:
        return None  # not notebook JSON: git's text diff is the honest view
    header = (
        f"diff --git a/{old_path} b/{path}\n"
        "notebook: changed cell sources only (outputs and execution counts stripped); "
        "line numbers are within each cell\n"
        f"--- a/{old_path}\n+++ b/{path}\n"
    )
    return header + body


def _untracked(target: Target, path: str) -> FileDiff:
    file = target.root / path
    if file.is_symlink():
        link = os.readlink(file)
        text = f"diff --git a/{path} b/{path}\nnew symlink (untracked)\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{link}\n"
        return FileDiff(path, "added", text)
    size = file.stat().st_size if file.is_file() else 0
    if size > MAX_UNTRACKED:
        text = f"diff --git a/{path} b/{path}\nnew file (untracked, {size} bytes); not shown\n"
        return FileDiff(path, "added", text, skip=f"untracked file too large ({size} bytes)")
    data = file.read_bytes() if size else b""
    if b"\0" in data[:8000]:
        return FileDiff(
            path,
            "added",
            f"diff --git a/{path} b/{path}\nbinary file added (untracked); not shown\n",
            binary=True,
        )
    if path.endswith(".ipynb"):
        try:
            body, _ = cell_sources.diff(None, data)
        except ValueError:
            pass
        else:
            header = (
                f"diff --git a/{path} b/{path}\nnew notebook (untracked): cell sources only\n"
                f"--- /dev/null\n+++ b/{path}\n"
            )
            return FileDiff(path, "added", header + body, notebook=True)
    lines = data.decode("utf-8", errors="replace").splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    text = f"diff --git a/{path} b/{path}\nnew file (untracked)\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"
    return FileDiff(path, "added", text)


def _split(diff: Diff, budget: int, max_parts: int) -> None:
    part: list[FileDiff] = []
    size = 0
    for f in diff.files:
        if f.binary or f.skip:
            diff.skipped.append({"path": f.path, "reason": f.skip or "binary file"})
            continue
        if len(f.text) > budget:
            diff.skipped.append(
                {
                    "path": f.path,
                    "reason": f"diff too large ({f.lines} lines, {len(f.text)} characters; budget {budget})",
                }
            )
            continue
        if part and size + len(f.text) > budget:
            diff.parts.append(part)
            part, size = [], 0
        if len(diff.parts) >= max_parts:
            diff.skipped.append(
                {"path": f.path, "reason": f"over the review budget ({max_parts} parts)"}
            )
            continue
        part.append(f)
        size += len(f.text)
    if part:
        diff.parts.append(part)
