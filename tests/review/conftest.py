"""Real git repositories in tmp_path for the review tests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    """A git repository to write files into and commit."""

    def __init__(self, root: Path):
        self.root = root

    def git(self, *args: str) -> str:
        env = {**os.environ, **ENV, "HOME": str(self.root.parent)}
        proc = subprocess.run(
            ["git", "-C", str(self.root), *args], capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    def write(self, path: str, content: str | bytes) -> Path:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            file.write_bytes(content)
        else:
            file.write_text(content)
        return file

    def commit(self, message: str = "change", **files: str | bytes) -> str:
        for path, content in files.items():
            self.write(path, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def make_notebook(*cells: tuple[str, str, str], outputs: bool = True) -> str:
    """Notebook JSON from (id, type, source) cells, with outputs on code cells."""
    nb_cells = []
    for ident, kind, source in cells:
        cell = {"id": ident, "cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell["execution_count"] = 7
            cell["outputs"] = (
                [{"output_type": "stream", "name": "stdout", "text": "SECRET-OUTPUT\n"}]
                if outputs
                else []
            )
        nb_cells.append(cell)
    return json.dumps(
        {"cells": nb_cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1
    )


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    root.mkdir()
    r = Repo(root)
    r.git("init", "-q", "-b", "main")
    return r


@pytest.fixture
def notebook():
    """Build notebook JSON: notebook(("id", "code", "source"), ..., outputs=True)."""
    return make_notebook
