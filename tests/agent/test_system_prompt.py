"""The system prompt: AGENTS.md is read with the tools' confinement, never through a symlink out."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from elelem_kernel.agent import system_prompt
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from tests.scripted import Scripted, say

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not-for-the-model"


@pytest.fixture
def tree(tmp_path):
    """outer/ (above the workspace) holding ws/ (the workspace) and a secret beside both."""
    (tmp_path / "id_ed25519").write_text(SECRET)
    workspace = tmp_path / "outer" / "ws"
    workspace.mkdir(parents=True)
    return workspace


def sent_system(workspace, home) -> str:
    """The system prompt a scripted provider receives for one turn in `workspace`."""
    provider = Scripted(say("ok"))
    session = Session(provider, Toolbox(), workspace=workspace)
    assert Path.home() == home
    asyncio.run(session.turn("hi"))
    return provider.sent[0]["messages"][0]["content"]


pytestmark = pytest.mark.usefixtures("home")  # tests/conftest.py: HOME in tmp_path


def test_the_workspaces_agents_md_is_sent(tree, home):
    (tree / "AGENTS.md").write_text("Use tabs.")
    assert "Use tabs." in sent_system(tree, home)


def test_a_symlinked_agents_md_pointing_out_of_the_workspace_is_not_sent(tree, home):
    (tree / "AGENTS.md").symlink_to(tree.parent.parent / "id_ed25519")
    with pytest.warns(UserWarning, match="leads outside the workspace"):
        system = sent_system(tree, home)
    assert SECRET not in system
    assert "Instructions from" not in system


def test_a_symlink_inside_the_workspace_is_followed(tree, home):
    (tree / "docs").mkdir()
    (tree / "docs" / "agents.md").write_text("Write short functions.")
    (tree / "AGENTS.md").symlink_to("docs/agents.md")
    assert "Write short functions." in sent_system(tree, home)


def test_above_the_workspace_a_symlink_elsewhere_is_not_sent(tree, home):
    (tree.parent / "AGENTS.md").symlink_to(tree.parent.parent / "id_ed25519")
    with pytest.warns(UserWarning, match="AGENTS.md"):
        assert SECRET not in sent_system(tree, home)
    (tree.parent / "AGENTS.md").unlink()
    (tree.parent / "AGENTS.md").write_text("Be brief.")  # the person's own, above the repo
    assert "Be brief." in sent_system(tree, home)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.timeout(20)
def test_a_fifo_agents_md_neither_hangs_nor_is_sent(tree, home):
    (tree.parent / "AGENTS.md").write_text("from above")
    os.mkfifo(tree / "AGENTS.md")
    with pytest.warns(UserWarning, match="not a regular file"):
        system = sent_system(tree, home)
    assert "Instructions from" not in system  # the nearest one decides; nothing replaces it
    (home / ".agents").mkdir(parents=True)
    os.mkfifo(home / ".agents" / "AGENTS.md")
    with pytest.warns(UserWarning, match="not a regular file"):
        assert "Instructions from" not in system_prompt.build(tree, home=home)


@pytest.mark.skipif(getattr(os, "getuid", lambda: 1)() != 0, reason="needs root to chown")
def test_above_the_workspace_another_users_file_is_not_sent(tree, home):
    (tree.parent / "AGENTS.md").write_text("Planted in a shared folder.")
    os.chown(tree.parent / "AGENTS.md", 65534, -1)
    with pytest.warns(UserWarning, match="belongs to another user"):
        assert "Planted" not in sent_system(tree, home)


def test_a_big_agents_md_is_cut(tree, home):
    (tree / "AGENTS.md").write_text("x" * (system_prompt.READ_LIMIT * 3))
    system = system_prompt.build(tree, home=home)
    assert system.count("x") < system_prompt.READ_LIMIT + 100
