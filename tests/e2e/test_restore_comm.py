# ruff: noqa: F811  (the fixtures `folder` and `env` come from test_persistence)
"""The frontend route: records sent over the `elelem.restore` comm, no notebook file at all.

What the JupyterLab extension does, done here with jupyter_client against a real kernel:
a comm_open to `elelem.restore` with the open notebook's cells, right before the execute
request. The kernel must restore exactly as from the file (same turns, same warnings),
learn the notebook's folder, and say once when it cannot see that folder.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from queue import Empty

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from tests.comm_schemas import check
from tests.e2e.kernels import run, texts
from tests.e2e.test_persistence import (  # noqa: F401  (env, folder, records: fixtures)
    cell_source,
    client,
    damaged,
    env,
    folder,
    notebook,
    records,
    sent,
)

pytestmark = pytest.mark.kernel


def payload(nb: nbformat.NotebookNode, path: str, root: str) -> dict:
    """The comm data the extension sends (labextension/src/index.ts)."""
    cells = [
        {
            "id": cell.get("id"),
            "cell_type": cell.cell_type,
            "outputs": [
                {"metadata": {"elelem": o["metadata"]["elelem"]}}
                for o in cell.get("outputs", [])
                if "elelem" in o.get("metadata", {})
            ],
        }
        for cell in nb.cells
    ]
    return {"v": 1, "reason": "cell", "path": path, "root": root, "notebook": {"cells": cells}}


def open_comm(kc, data: dict) -> dict:
    """Send the comm_open; the kernel's answer (comm_msg data), or {} when it closed it."""
    comm_id = uuid.uuid4().hex
    content = {"comm_id": comm_id, "target_name": "elelem.restore", "data": data}
    kc.shell_channel.send(kc.session.msg("comm_open", content))
    answer: dict = {}
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=30)
        except Empty:
            raise AssertionError("the kernel never closed the comm") from None
        if msg["content"].get("comm_id") != comm_id:
            continue
        if msg["msg_type"] == "comm_msg":
            answer = msg["content"]["data"]
            check("elelem.restore", "from_kernel", answer)  # as the schema says
        if msg["msg_type"] == "comm_close":
            return answer


def two_turns(folder: Path, env: dict, kernel: str) -> nbformat.NotebookNode:
    nb = notebook(["Remember the word PELICAN.", "Second question."], kernel)
    client(nb, folder).execute(env=env)
    (folder / "sent.jsonl").unlink()
    return nb


@pytest.fixture
def unsaved(env):
    """The kernel knows no notebook file: only the frontend can tell it."""
    env.pop("ELELEM_NOTEBOOK")
    return env


@pytest.mark.parametrize("kernel", ["python3", "elelem"])
def test_an_unsaved_notebook_restores_from_the_frontend(folder, unsaved, kernel):
    nb = two_turns(folder, unsaved, kernel)
    assert not (folder / "nb.ipynb").exists()
    data = payload(nb, "nb.ipynb", str(folder))

    km, kc = start_new_kernel(kernel_name=kernel, env=unsaved, cwd=str(folder))
    try:
        if kernel == "python3":
            assert open_comm(kc, data) == {}  # no target before %load_ext: closed, harmless
            run(kc, "%load_ext elelem_kernel")
        assert open_comm(kc, data) == {"received": len(nb.cells)}
        reply, outputs = run(kc, cell_source(kernel, "Which word did I ask you to remember?"))
        assert reply["content"]["status"] == "ok"
        _, status = run(kc, "%elelem /load")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

    assert "restored 2 turns from nb.ipynb" in texts(outputs)
    assert "workspace:" not in texts(outputs)  # the folder is visible: nothing to say
    assert f"notebook: `{folder / 'nb.ipynb'}` (from the frontend)" in texts(status)
    third = sent(folder)[-1]
    users = [m["content"] for m in third if m["role"] == "user"]
    assert users == [
        "Remember the word PELICAN.",
        "Second question.",
        "Which word did I ask you to remember?",
    ]


def test_load_without_a_path_restores_what_the_frontend_sent(folder, unsaved):
    nb = two_turns(folder, unsaved, "elelem")
    km, kc = start_new_kernel(kernel_name="elelem", env=unsaved, cwd=str(folder))
    try:
        run(kc, "Hello before anything was sent.")
        assert open_comm(kc, payload(nb, "nb.ipynb", str(folder)))["received"] == 2
        _, loaded = run(kc, "/load")
        run(kc, "And now?")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert "restored 2 turns from nb.ipynb" in texts(loaded)
    users = [m["content"] for m in sent(folder)[-1] if m["role"] == "user"]
    assert users == ["Remember the word PELICAN.", "Second question.", "And now?"]


def test_the_frontend_folder_is_the_workspace_when_the_kernel_starts_elsewhere(
    folder, unsaved, tmp_path_factory
):
    nb = two_turns(folder, unsaved, "elelem")
    elsewhere = tmp_path_factory.mktemp("gateway-root")
    unsaved["ELELEM_PROVIDER"] = "echo"  # the recorder plugin lives in the notebook's folder
    km, kc = start_new_kernel(kernel_name="elelem", env=unsaved, cwd=str(elsewhere))
    try:
        open_comm(kc, payload(nb, "nb.ipynb", str(folder)))
        _, outputs = run(kc, "Third.")
        _, where = run(kc, WORKSPACE)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert "restored 2 turns from nb.ipynb" in texts(outputs)
    assert "workspace:" not in texts(outputs)
    assert texts(where).strip() == str(folder)


WORKSPACE = (
    "%%py\nfrom elelem_kernel.jupyter.shell_front import front_for\n"
    "print(front_for(get_ipython()).session.workspace)"
)


@pytest.mark.parametrize("kernel", ["python3", "elelem"])
def test_a_folder_the_person_moved_to_wins_over_the_notebooks_folder(
    folder, unsaved, tmp_path_factory, kernel
):
    """code_review.ipynb `os.chdir`s into the repository it built: that is what it reviews,
    though the extension names the notebook's own folder."""
    moved = tmp_path_factory.mktemp("shop")
    unsaved["ELELEM_PROVIDER"] = "echo"
    prefix = "%%py\n" if kernel == "elelem" else ""
    km, kc = start_new_kernel(kernel_name=kernel, env=unsaved, cwd=str(folder))
    try:
        run(kc, f"{prefix}import os\nos.chdir({str(moved)!r})")
        if kernel == "python3":
            run(kc, "%load_ext elelem_kernel")
        open_comm(kc, payload(notebook(["Hello."], kernel), "nb.ipynb", str(folder)))
        _, outputs = run(kc, cell_source(kernel, "Hello."))
        _, where = run(kc, WORKSPACE if kernel == "elelem" else WORKSPACE.removeprefix("%%py\n"))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert texts(where).strip() == str(moved.resolve())
    assert f"not the notebook's folder `{folder}`" in texts(outputs)


def test_a_folder_the_kernel_cannot_see_is_said_once(folder, unsaved):
    nb = two_turns(folder, unsaved, "elelem")
    km, kc = start_new_kernel(kernel_name="elelem", env=unsaved, cwd=str(folder))
    try:
        open_comm(kc, payload(nb, "work/nb.ipynb", "/nonexistent-server-root"))
        _, first = run(kc, "Third.")
        _, second = run(kc, "Fourth.")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    shown = texts(first)
    assert "restored 2 turns from nb.ipynb" in shown
    assert "cannot see the notebook's folder `/nonexistent-server-root/work`" in shown
    assert "cannot see" not in texts(second)


@pytest.mark.parametrize("kind", ["future-version"])
def test_damaged_records_from_the_frontend_warn_as_from_the_file(folder, env, kind):
    path = damaged(folder, env, kind)
    nb = nbformat.reads(path.read_text(), as_version=4)
    path.unlink()
    env.pop("ELELEM_NOTEBOOK")
    (folder / "sent.jsonl").unlink()
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(folder))
    try:
        run(kc, "%load_ext elelem_kernel")
        open_comm(kc, payload(nb, "nb.ipynb", str(folder)))
        reply, outputs = run(kc, "%%elelem\nThird.")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok"
    shown = texts(outputs)
    assert "restored 2 turns from nb.ipynb" in shown
    assert shown.count("warning:") == 2, shown
    assert "newer elelem-kernel" in shown
    assert not (folder / "PWNED").exists()


def test_a_malformed_message_is_a_warning(folder, unsaved):
    km, kc = start_new_kernel(kernel_name="elelem", env=unsaved, cwd=str(folder))
    try:
        assert open_comm(kc, {"path": "nb.ipynb", "notebook": {"cells": "nope"}}) == {"received": 0}
        reply, outputs = run(kc, "Hello.")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert reply["content"]["status"] == "ok"
    assert "warning: nb.ipynb has no list of cells; nothing restored" in texts(outputs)
    assert json.loads((folder / "sent.jsonl").read_text().splitlines()[-1])[-1]["content"] == (
        "Hello."
    )
