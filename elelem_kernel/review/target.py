"""What a review looks at: TARGET resolved to a base, a head and optional paths.

(nothing)      uncommitted changes (staged, unstaged, untracked) if any, else the last commit
A..B, A...B    the changes from A (or the merge base of A and B) to B
REV            the changes since REV, up to the working tree (as `git diff REV`)
PATH...        restricts any of the above to those paths; a path without changes is
               reviewed whole
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from elelem_kernel.errors import ReviewError
from elelem_kernel.review import git
from elelem_kernel.review.git import EMPTY_TREE


@dataclass(frozen=True)
class Target:
    """A resolved review target. `head` None means the working tree."""

    root: Path
    base: str
    head: str | None
    label: str
    paths: tuple[str, ...] = ()
    untracked: tuple[str, ...] = field(default=())
    whole: bool = False  #: paths without changes: review the files as they are

    def diff_args(self) -> list[str]:
        """The revision arguments of `git diff` for this target."""
        return [self.base] if self.head is None else [self.base, self.head]

    def command(self) -> str:
        """The git command that shows this target's diff (for the prompt and the model)."""
        tail = f" -- {' '.join(shlex.quote(p) for p in self.paths)}" if self.paths else ""
        return f"git diff {' '.join(self.diff_args())}{tail}"


def split(target: str | Sequence[str] | None) -> list[str]:
    """TARGET as a list of words (a string is split like a shell would)."""
    if target is None:
        return []
    if isinstance(target, str):
        return shlex.split(target)
    return [str(t) for t in target]


def resolve(target: str | Sequence[str] | None, workspace: Path) -> Target:
    """Resolve TARGET inside the repository holding `workspace`; ReviewError if it cannot."""
    root = git.repo_root(Path(workspace))
    words = split(target)
    revs, paths = _revs_and_paths(root, Path(workspace), words)
    if len(revs) > 1:
        raise ReviewError(f"give one revision or range, not {len(revs)}: {' '.join(revs)}")
    if revs:
        return _revision(root, revs[0], paths)
    return _default(root, paths)


def _revs_and_paths(root: Path, workspace: Path, words: list[str]) -> tuple[list[str], list[str]]:
    revs: list[str] = []
    paths: list[str] = []
    after_dashdash = False
    for word in words:
        if word == "--":
            after_dashdash = True
        elif after_dashdash or not _looks_like_rev(root, word):
            paths.append(_repo_path(root, workspace, word))
        else:
            revs.append(word)
    return revs, paths


def _looks_like_rev(root: Path, word: str) -> bool:
    if ".." in word:
        return True
    if git.commit(root, word) is not None:
        return True
    if (root / word).exists():
        return False
    raise ReviewError(
        f"unknown revision or path: {word!r} (not a commit, branch or tag in {root}, "
        "and no such file; put paths that no longer exist after `--`)"
    )


def _repo_path(root: Path, workspace: Path, word: str) -> str:
    candidate = (workspace / word).resolve()
    if not candidate.exists():
        candidate = (root / word).resolve()
    try:
        return candidate.relative_to(root.resolve()).as_posix() or "."
    except ValueError:
        raise ReviewError(f"path outside the repository {root}: {word}") from None


def _commit(root: Path, rev: str) -> str:
    sha = git.commit(root, rev)
    if sha is None:
        raise ReviewError(f"unknown revision: {rev!r} (no such commit, branch or tag in {root})")
    return sha


def _revision(root: Path, rev: str, paths: list[str]) -> Target:
    if "..." in rev:
        a, b = rev.split("...", 1)
        a_sha, b_sha = _commit(root, a or "HEAD"), _commit(root, b or "HEAD")
        base = git.text(root, "merge-base", a_sha, b_sha).strip()
        return Target(root, base, b_sha, rev, tuple(paths))
    if ".." in rev:
        a, b = rev.split("..", 1)
        return Target(
            root, _commit(root, a or "HEAD"), _commit(root, b or "HEAD"), rev, tuple(paths)
        )
    return Target(root, _commit(root, rev), None, f"changes since {rev}", tuple(paths))


def _default(root: Path, paths: list[str]) -> Target:
    head = git.commit(root, "HEAD")
    base = head or EMPTY_TREE
    spec = ["--", *paths] if paths else []
    changed = git.text(root, "diff", "--name-only", base, *spec).strip()
    untracked = tuple(
        p
        for p in git.text(root, "ls-files", "--others", "--exclude-standard", "-z", *spec).split(
            "\0"
        )
        if p
    )
    if changed or untracked:
        return Target(root, base, None, "uncommitted changes", tuple(paths), untracked)
    if head is not None:
        parent = git.commit(root, "HEAD~1") or EMPTY_TREE
        last = git.text(root, "diff", "--name-only", parent, head, *spec).strip()
        if last:
            return Target(root, parent, head, "the last commit", tuple(paths))
    if paths:
        return Target(root, EMPTY_TREE, head, "the files as they are", tuple(paths), whole=True)
    return Target(root, base, None, "uncommitted changes", ())
