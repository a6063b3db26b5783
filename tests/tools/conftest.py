"""Fixtures for the workspace tools: a real folder and a stand-in session."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.tools.declaration import ToolContext
from elelem_kernel.tools.workspace import Workspace


class StandInSession:
    """A toolbox and the tool context add_workspace_tools fills it for, nothing more."""

    def __init__(self, workspace: Path, open_notebook: Path | None = None):
        self.toolbox = Toolbox()
        self.proposed: list[str] = []
        # build mode, nothing allowed by name, no notebook open in a front
        self.tool_context = ToolContext(
            workspace.resolve(), {}, open_notebook, propose_cell=self.proposed.append
        )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)
