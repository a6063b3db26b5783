"""The ACP tests' fixtures: the agent's environment and a workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path) -> dict[str, str]:
    """The agent's environment: its own HOME (no person's plugins) and sessions folder
    (and the PYTHONPATH the tests run with, so that the agent runs the same code)."""
    home = tmp_path / "home"
    (home / ".agents").mkdir(parents=True)
    path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    return {
        **path,
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "ELELEM_ACP_SESSIONS": str(tmp_path / "sessions"),
        "ELELEM_PROVIDER": "anthropic",
    }


@pytest.fixture
def ws(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\nthree\n")
    return ws
