"""Running git for a review: one place that calls the binary and turns failures into ReviewError."""

from __future__ import annotations

import subprocess
from pathlib import Path

from elelem_kernel.errors import ReviewError, ToolError
from elelem_kernel.tools import git_command

#: The id of git's empty tree: the base of a diff for a repository without commits.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def run(
    root: Path, *args: str, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """Run neutral `git -C root args...` (see `git_command`) and return the finished process.

    Review commands read work-tree files, so the repository's filter and diff drivers are
    blanked too.
    """
    try:
        proc = git_command.run(root, *args, drivers=True, timeout=timeout)
    except FileNotFoundError as e:
        raise ReviewError("git is not installed (install git and try again)") from e
    except ToolError as e:
        raise ReviewError(str(e)) from e
    except subprocess.TimeoutExpired as e:
        raise ReviewError(f"git {' '.join(args)} took longer than {timeout:.0f}s") from e
    if check and proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip()
        raise ReviewError(f"git {' '.join(args)} failed: {message}")
    return proc


def text(root: Path, *args: str) -> str:
    """The standard output of a git command that must succeed, as text."""
    return run(root, *args).stdout.decode("utf-8", errors="replace")


def repo_root(path: Path) -> Path:
    """The top folder of the git repository holding `path`, or ReviewError."""
    path = Path(path)
    if not path.is_dir():
        raise ReviewError(f"not a git repository: {path} (no such folder)")
    proc = run(path, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0:
        raise ReviewError(
            f"not a git repository: {path} (run the review inside a git repository, "
            "or `git init` and commit first)"
        )
    return Path(proc.stdout.decode().strip())


def commit(root: Path, rev: str) -> str | None:
    """The commit id `rev` names, or None when it names none."""
    proc = run(
        root,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{rev}^{{commit}}",
        check=False,
    )
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def blob(root: Path, rev: str, path: str) -> bytes | None:
    """The bytes of `path` at `rev`, or None when it is not there."""
    proc = run(root, "cat-file", "blob", f"{rev}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None
