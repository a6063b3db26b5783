"""The open notebook as the agent's workspace, in JupyterLab and Notebook 7 (issue 26).

A scripted model reads the open notebook (an unsaved edit and a failing cell's error
included), then proposes two edits: the fix of the failing cell, shown as a diff in that
cell, which the person accepts, and the deletion of another cell, struck through, which
the person rejects with a reason that reaches the model. The accepted cell carries the
agent's mark, also after saving and reopening.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tests.e2e.browser.comms import CommRecorder
from tests.e2e.browser.lab import (
    NOTEBOOKS,
    LabServer,
    NotebookServer,
    extension_env,
    write_notebook,
)
from tests.e2e.browser.pages import FROZEN, Lab, opened
from tests.wire_servers import Round, reply

# 600 s: a module's first test also waits for the JupyterLab it starts, slow on a loaded machine
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

SOURCE = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index)
  .sharedModel.getSource()
"""
MARKED = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index)
  .getMetadata('elelem') || null
"""
OUTPUT_TYPES = """
(index) => window.jupyterapp.shell.currentWidget.content.model.cells.get(index)
  .sharedModel.getOutputs().map(o => o.output_type)
"""
UNDONE = """
() => {
  for (const cell of window.jupyterapp.shell.currentWidget.content.model.cells) {
    for (let i = 0; cell.type === 'code' && i < cell.outputs.length; i++) {
      const record = (cell.outputs.get(i).metadata || {}).elelem;
      if (record && record.turn) return record.undone === true;
    }
  }
  return null;
}
"""
SAVE = """
async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.save();
  return panel.context.model.dirty;
}
"""


@pytest.fixture(scope="module", params=["lab", "notebook7"])
def server(request, shots, wire, tmp_path_factory) -> Iterator[LabServer]:
    if request.param == "notebook7":
        pytest.importorskip("notebook", reason="Notebook 7 tests need `pip install notebook`")
    root = tmp_path_factory.mktemp(f"open-{request.param}")
    env = extension_env(tmp_path_factory.mktemp("jupyter-open"), wire, enabled=True)
    kind = NotebookServer if request.param == "notebook7" else LabServer
    started = kind(root, env, shots / f"open-notebook-{request.param}.log").start()
    started.kind = request.param  # type: ignore[attr-defined]
    yield started
    started.stop()


def proposal(lab: Lab, cell) -> object:
    box = cell.locator(".elelem-proposal")
    box.wait_for(timeout=120_000)
    return box


def test_fix_accept_one_reject_another(browser, server, wire, shots):
    root = Path(server.root)
    name = write_notebook(
        root / "fix.ipynb",
        [
            "%load_ext elelem_kernel",
            "x = 1/0",
            "print('keep me')",
            "%%elelem -p openai\nfix the cell that failed",
        ],
    )
    wire.requests.clear()
    wire.queue(
        reply(
            "openai",
            Round(
                calls=[
                    ("notebook_read", {}, "read-1"),
                    ("write", {"path": "fix_notes.md", "content": "fixed 1/0\n"}, "write-1"),
                ]
            ),
        ),
        reply(
            "openai",
            Round(
                calls=[
                    ("notebook_edit", {"cell": 1, "old": "1/0", "new": "1/1"}, "edit-1"),
                    ("notebook_edit", {"cell": 2, "delete": True}, "edit-2"),
                ]
            ),
        ),
        reply("openai", Round(text="Fixed the division; kept your print.")),
    )
    tag = server.kind
    comms = CommRecorder()
    with opened(browser, server, shots, name, f"open-{tag}", comms.attach) as lab:
        assert lab.has_plugin("elelem-kernel:restore")
        lab.run("%load_ext elelem_kernel")
        lab.run("x = 1/0")
        editor = lab.cell("keep me").locator(".jp-InputArea-editor .cm-content")
        editor.click()
        lab.page.keyboard.press("Control+a")
        lab.page.keyboard.type("print('unsaved edit')")

        turn = lab.start("fix the cell that failed")
        allow = turn.locator(".elelem-card").get_by_role("button", name="Allow", exact=True)
        allow.wait_for(timeout=120_000)
        allow.click()
        failing = lab.cell("x = 1/0")
        box = proposal(lab, failing)
        assert "elelem proposes to change this cell" in box.inner_text()
        assert box.locator(".cm-deletedChunk, .cm-changedLine, ins, del").count() >= 1
        lab.shot(f"26-{tag}-diff-proposed", failing)
        assert lab.page.evaluate(SOURCE, 1) == "x = 1/0"  # nothing applied before Accept
        box.get_by_role("button", name="Accept", exact=True).click()

        kept = lab.cell("unsaved edit")
        box = proposal(lab, kept)
        assert "delete this cell" in box.inner_text()
        assert "elelem-deleting" in (kept.get_attribute("class") or "")
        lab.shot(f"26-{tag}-delete-proposed", kept)
        box.locator(".elelem-proposal-reason").fill("I still need that print")
        box.get_by_role("button", name="Reject", exact=True).click()

        lab.wait_done(turn)
        turn.locator(FROZEN).wait_for()
        assert lab.page.evaluate(SOURCE, 1) == "x = 1/1"
        assert lab.page.evaluate(SOURCE, 2) == "print('unsaved edit')"
        mark = lab.page.evaluate(MARKED, 1)
        assert mark and mark["change"] == "replace" and mark["turn"]
        assert lab.page.evaluate(MARKED, 2) is None
        fixed = lab.cell("x = 1/1")
        assert "elelem-agent-cell" in (fixed.get_attribute("class") or "")
        lab.shot(f"26-{tag}-after-turn", lab.page.locator(".jp-NotebookPanel").first)
        assert lab.page.evaluate(SAVE) is False
        lab.reload()
        assert "elelem-agent-cell" in (lab.cell("x = 1/1").get_attribute("class") or "")
        assert not lab.console_errors or all("elelem" not in e for e in lab.console_errors)
        assert (root / "fix_notes.md").read_text() == "fixed 1/0\n"

        button = lab.cell("fix the cell that failed").locator(".elelem-undo")
        button.wait_for(timeout=30_000)  # drawn once the reopened turn's output is rendered
        assert button.count() == 1
        lab.run("x = 1/1")  # the person runs the fixed cell: its error output is gone
        assert lab.page.evaluate(OUTPUT_TYPES, 1) == []
        cells = lab.page.locator(".jp-NotebookPanel .jp-Cell").count()
        button.click()  # undoes through the kernel's comm: no cell is added
        turn_cell = lab.cell("fix the cell that failed")
        said = turn_cell.locator(".elelem-undone-note", has_text=re.compile("Reverted:"))
        said.wait_for(timeout=60_000)  # the kernel's answer (the mark may come first)
        assert "Reverted" in said.inner_text() and "cannot be restored" in said.inner_text()
        assert lab.page.locator(".jp-NotebookPanel .jp-Cell").count() == cells
        assert lab.page.evaluate(SOURCE, 1) == "x = 1/0"
        assert lab.page.evaluate(OUTPUT_TYPES, 1) == ["error"]  # its outputs came back too
        assert not (root / "fix_notes.md").exists()
        assert lab.page.evaluate(MARKED, 1) is None
        assert lab.page.evaluate(UNDONE) is True  # the turn's saved record will say so
        lab.shot(f"26-{tag}-undone", lab.page.locator(".jp-NotebookPanel").first)
        assert lab.page.locator(".elelem-undo").count() == 0  # nothing left to undo

    # every message of elelem's comms both ways, as the extension and the kernel sent them,
    # is one its comm's schema describes (elelem_kernel/jupyter/comm_schemas/)
    assert set(comms.checked()) >= {
        ("elelem.restore", "Restore"),
        ("elelem.restore", "Received"),
        ("elelem.notebook", "NotebookOpen"),
        ("elelem.notebook", "Hello"),
        ("elelem.notebook", "ReadRequest"),
        ("elelem.notebook", "Ack"),
        ("elelem.notebook", "Result:ReadResult"),
        ("elelem.notebook", "EditRequest"),
        ("elelem.notebook", "Result:EditResult"),
        ("elelem.undoable", "UndoableQuery"),
        ("elelem.undoable", "UndoableTurns"),
        ("elelem.undoable", "UndoRequest"),
        ("elelem.undoable", "UndoText"),
        ("elelem.notebook", "RevertRequest"),
        ("elelem.notebook", "Result:RevertResult"),
        ("elelem.notebook", "MarkUndoneRequest"),
        ("elelem.notebook", "Result:MarkUndoneResult"),
    }
    read_result = tool_messages(wire.requests[1].body)[0]
    assert "print('unsaved edit')" in read_result and "ZeroDivisionError" in read_result
    assert '\\"this_turn\\": true' in json.dumps(read_result) or '"this_turn": true' in read_result
    accepted, rejected = tool_messages(wire.requests[2].body)[-2:]
    assert '"created"' in tool_messages(wire.requests[1].body)[1]
    assert '"decision": "accepted"' in accepted
    assert "declined" in rejected and "I still need that print" in rejected
    saved = nbformat.read(root / "fix.ipynb", as_version=4)  # saved before the undo
    assert saved.cells[1].source == "x = 1/1"
    assert saved.cells[1].metadata["elelem"]["change"] == "replace"


def tool_messages(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_the_demo_fixes_the_cell_that_failed(browser, server, shots):
    """notebooks/fix_a_cell.ipynb as a person runs it, with the offline demo model."""
    root = Path(server.root)
    nb = nbformat.read(NOTEBOOKS / "fix_a_cell.ipynb", as_version=4)  # saved as it ended:
    nb.cells[3].source = nb.cells[3].source.replace("print(", "pritn(")  # the typo back
    nb.cells[3].outputs, nb.cells[3].metadata = [], {}
    nbformat.write(nb, root / "fix_a_cell.ipynb")
    tag = server.kind
    comms = CommRecorder()
    with opened(browser, server, shots, "fix_a_cell.ipynb", f"demo-{tag}", comms.attach) as lab:
        lab.run("%load_ext elelem_kernel")
        lab.run("prices = [3.5, 2.25, 4.0]")
        failing = lab.run("pritn(")
        assert "NameError" in failing.inner_text()

        turn = lab.start("fix the cell that failed")
        box = proposal(lab, failing)
        lab.shot(f"26-{tag}-demo-diff", failing)
        box.get_by_role("button", name="Accept", exact=True).click()
        lab.wait_done(turn)
        turn.locator(FROZEN).wait_for()
        assert "The fix is in the cell" in turn.inner_text()
        assert lab.page.evaluate(SOURCE, 3) == 'print(f"total: {total}")'

        check = lab.start("run the cell that failed")
        card = check.locator(".elelem-card").last
        allow = card.get_by_role("button", name="Allow", exact=True)
        allow.wait_for(timeout=120_000)
        assert "your kernel's namespace" in card.inner_text()
        allow.click()
        lab.wait_done(check)
        check.locator(FROZEN).wait_for()
        fixed = lab.cell('print(f"total')
        output = fixed.locator(".jp-OutputArea-output").first
        output.wait_for()
        assert "total: 9.75" in output.inner_text()
        assert "NameError" not in fixed.inner_text()
        ran = re.search(r"\[(\d+)\]", fixed.locator(".jp-InputPrompt").first.inner_text())
        asked = re.search(r"\[(\d+)\]", check.locator(".jp-InputPrompt").first.inner_text())
        assert ran and asked and int(ran.group(1)) == int(asked.group(1)) + 1
        assert "I ran it" in check.inner_text() and "total: 9.75" in check.inner_text()
        lab.shot(f"26-{tag}-demo-fixed", lab.page.locator(".jp-NotebookPanel").first)
        assert lab.page.evaluate(SAVE) is False
    shutil.copy(root / "fix_a_cell.ipynb", shots / f"fix_a_cell-{tag}.ipynb")  # as it ends
    seen = set(comms.checked())  # the schema's messages only, both ways
    assert {
        ("elelem.notebook", "OutputsRequest"),
        ("elelem.notebook", "Result:OutputsResult"),
    } <= seen


def _turn_notebook(path: Path, record: dict) -> str:
    """A notebook that loads elelem, then a turn cell whose frozen output carries `record`."""
    output = nbformat.v4.new_output(
        "display_data", data={"text/plain": "made own.md"}, metadata={"elelem": record}
    )
    turn = nbformat.v4.new_code_cell("%%elelem\nmake own.md", outputs=[output])
    load = nbformat.v4.new_code_cell("%load_ext elelem_kernel")
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(
        nbformat.v4.new_notebook(cells=[load, turn], metadata={"kernelspec": kernelspec}), path
    )
    return path.name


def test_undo_is_offered_only_for_turns_this_person_signed(browser, server, shots):
    """The kernel says which turns it would undo (`elelem.undoable`): a record signed with
    this person's secret gets the button; the same record with a forged signature, as a
    shared notebook could carry, gets none (security round 3)."""
    import hashlib
    import os
    from unittest import mock

    from elelem_kernel.store import signature

    root = server.root
    (root / "own.md").write_text("mine\n")
    change = {"kind": "file", "action": "write", "path": "own.md", "before": None, "created": True}
    change["after_sha"] = hashlib.sha256(b"mine\n").hexdigest()
    record = {"v": 1, "conversation": "c1", "turn": "t-signed", "cell": None, "provider": "demo"}
    record.update(model=None, prompt="make own.md", reply="made", rounds=[], changes=[change])
    record.update(usage={}, stop="end_turn", started="2026-01-01T00:00:00+00:00", ms=1)
    env = server.env
    data = env.get("XDG_DATA_HOME") or str(Path(env["HOME"]) / ".local" / "share")
    with mock.patch.dict(os.environ, XDG_DATA_HOME=data):
        record["signature"] = signature.sign(record)
    forged = {**record, "turn": "t-forged", "signature": "hmac-sha256:" + "0" * 64}
    own = _turn_notebook(root / "own_turn.ipynb", record)
    shared = _turn_notebook(root / "shared_turn.ipynb", forged)
    tag = server.kind  # type: ignore[attr-defined]

    with opened(browser, server, shots, own, f"undo-own-{tag}") as lab:
        lab.run("%load_ext elelem_kernel")
        button = lab.cell("make own.md").locator(".elelem-undo")
        button.wait_for(timeout=30_000)
        lab.shot(f"27-{tag}-own-turn-undoable", lab.cell("make own.md"))
        button.click()  # a reopened notebook in a fresh kernel: undone through the comm
        said = lab.cell("make own.md").locator(
            ".elelem-undone-note", has_text=re.compile("Reverted:")
        )
        said.wait_for(timeout=60_000)
        assert "Reverted" in said.inner_text() and "own.md" in said.inner_text()
        assert lab.page.locator(".jp-NotebookPanel .jp-Cell").count() == 2  # no cell added
        lab.shot(f"27-{tag}-own-turn-undone", lab.cell("make own.md"))
    assert not (root / "own.md").exists()
    (root / "own.md").write_text("mine\n")
    with opened(browser, server, shots, shared, f"undo-shared-{tag}") as lab:
        lab.run("%load_ext elelem_kernel")
        lab.page.wait_for_timeout(3_000)  # the kernel's answer came for the signed one by now
        assert lab.page.locator(".elelem-undo").count() == 0
        lab.shot(f"27-{tag}-shared-turn-not-undoable", lab.cell("make own.md"))
    assert (root / "own.md").read_text() == "mine\n"
