"""Run git in a test's repository, with an identity of its own (commits work on any machine)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(folder: Path, *args: str) -> str:
    """`git ARGS` in `folder`; its stdout (CalledProcessError when git fails)."""
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout
