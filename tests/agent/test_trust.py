"""Folder trust: stored with a hash of the project files, asked again when they change."""

from __future__ import annotations

import os

import pytest

from elelem_kernel.agent import trust

pytestmark = pytest.mark.usefixtures("home")  # tests/conftest.py: HOME in tmp_path


def make_project(folder):
    (folder / ".agents" / "plugins").mkdir(parents=True)
    (folder / ".agents" / "plugins" / "p.py").write_text("X = 1\n")
    (folder / ".mcp.json").write_text('{"mcpServers": {}}')
    return folder


def test_untrusted_until_trusted(tmp_path):
    project = make_project(tmp_path / "repo")
    assert not trust.is_trusted(project)
    assert trust.trust(project) == project.resolve()
    assert trust.is_trusted(project)
    assert str(project.resolve()) in trust.trusted()


def test_a_changed_or_added_file_asks_again(tmp_path):
    project = make_project(tmp_path / "repo")
    trust.trust(project)
    (project / ".agents" / "plugins" / "p.py").write_text("X = 2\n")
    assert not trust.is_trusted(project)
    trust.trust(project)
    (project / ".agents" / "plugins" / "evil.py").write_text("import os\n")
    assert not trust.is_trusted(project)
    trust.trust(project)
    (project / ".agents" / "mcp.json").write_text("{}")
    assert not trust.is_trusted(project)


def test_revoke_and_garbage_store(tmp_path, home):
    project = make_project(tmp_path / "repo")
    trust.trust(project)
    assert trust.revoke(project)
    assert not trust.revoke(project)
    assert not trust.is_trusted(project)
    trust.trust(project)
    trust.store_path().write_text("{not json")
    assert not trust.is_trusted(project)
    assert trust.trusted() == {}


def test_trust_is_per_folder_not_per_name(tmp_path):
    one = make_project(tmp_path / "one")
    two = make_project(tmp_path / "two")
    trust.trust(one)
    assert not trust.is_trusted(two)
    with pytest.raises(NotADirectoryError):
        trust.trust(tmp_path / "missing")


def test_default_folders_are_the_workspace_and_a_subfolder_with_project_files(tmp_path):
    root = tmp_path / "repo"
    sub = root / "notebooks"
    sub.mkdir(parents=True)
    assert trust.default_folders(root, sub) == [root.resolve()]
    make_project(sub)
    assert trust.default_folders(root, sub) == [root.resolve(), sub.resolve()]
    assert trust.default_folders(root, root) == [root.resolve()]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_among_the_plugins_neither_hangs_nor_counts(tmp_path):
    project = make_project(tmp_path / "repo")
    before = trust.fingerprint(project)
    os.mkfifo(project / ".agents" / "plugins" / "pipe.py")
    assert trust.fingerprint(project) == before
    assert project / ".agents" / "plugins" / "pipe.py" not in trust.project_files(project)
