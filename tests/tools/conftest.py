"""Fixtures for the workspace tools: a real folder and a stand-in session."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.tools.workspace import Workspace


class StandInSession:
    """The attributes add_workspace_tools relies on, nothing more."""

    def __init__(self, workspace: Path, open_notebook: Path | None = None):
        self.toolbox = Toolbox()
        self.workspace = workspace.resolve()
        self.namespace: dict = {}
        self.open_notebook = open_notebook
        self.proposed: list[str] = []
        self.propose_cell = self.proposed.append
        self.turn_extras: dict = {}  # where a turn's changes are kept
        self.live_notebook = None  # no notebook open in a front
        self.turn_id: str | None = None
        self.mode = "build"
        self.always: set[str] = set()
        self.allow: set[str] = set()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)
