"""The open notebook through the `elelem.notebook` comm, against a real kernel.

This test plays the JupyterLab extension (labextension/src/live.ts) with jupyter_client:
it tells the kernel it has the feature (the `elelem.restore` comm), opens a comm
subshell, answers the kernel's requests on it while the prompt cell runs, and checks
what the model got back in the turn's record.
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from pathlib import Path
from queue import Empty

import pytest
from jupyter_client.manager import start_new_kernel

from tests.comm_schemas import check
from tests.e2e.kernels import (
    buttons_shown,
    frozen,
    isolated_env,
    opened,
    reply_to,
    run,
    send_in_cell,
    texts,
    trusted,
)

pytestmark = pytest.mark.kernel

HERE = Path(__file__).parent
TURN_CELL = "turn-cell"
ERROR = {
    "output_type": "error",
    "ename": "ZeroDivisionError",
    "evalue": "division by zero",
    "traceback": ["Traceback", "\x1b[31m----> 1 1/0\x1b[0m", "ZeroDivisionError: division by zero"],
}
CELLS = [
    {"id": "aaa", "cell_type": "markdown", "source": "# Unsaved title"},
    {
        "id": "bbb",
        "cell_type": "code",
        "source": "x = 1/0",
        "execution_count": 3,
        "outputs": [ERROR],
    },
    {
        "id": "ccc",
        "cell_type": "code",
        "source": "answer = 6 * 7\nprint('printed', answer)\nanswer",
        "execution_count": None,
        "outputs": [],
    },
    {
        "id": TURN_CELL,
        "cell_type": "code",
        "source": "%%elelem -p calls\nfix it",
        "execution_count": None,
        "outputs": [],
    },
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("open-notebook")
    plugins = root / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    shutil.copy(HERE / "notebook_plugin.py", plugins / "notebook_plugin.py")
    return root


@pytest.fixture(scope="module")
def kernel(folder):
    env = trusted(isolated_env(folder, ELELEM_NOTEBOOK_WAIT="2"), folder)
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(folder))
    reply, _ = run(kc, "%load_ext elelem_kernel")
    assert reply["content"]["status"] == "ok"
    kc.control_channel.send(kc.session.msg("create_subshell_request", {}))
    subshell = kc.get_control_msg(timeout=10)["content"]["subshell_id"]
    yield km, kc, subshell
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def restore(kc, features: list[str]) -> None:
    """What the extension sends before an elelem cell (index.ts), with its features."""
    comm_id = uuid.uuid4().hex
    data = {"v": 1, "reason": "cell", "path": "nb.ipynb", "root": "", "features": features}
    data["notebook"] = {"cells": [{"id": c["id"], "cell_type": c["cell_type"]} for c in CELLS]}
    content = {"comm_id": comm_id, "target_name": "elelem.restore", "data": data}
    kc.shell_channel.send(kc.session.msg("comm_open", content))


class Frontend:
    """The extension's side of one turn: hello, ack, then an answer from `answers`."""

    def __init__(self, kc, subshell: str, hello: bool = True, click: str | None = None, **answers):
        self.kc, self.subshell, self.hello = kc, subshell, hello
        self.answers = {"read": self.read, **answers}
        self.requests: list[dict] = []
        self.opened: dict | None = None
        #: the approval button to click ("Allow", "Deny") when the card shows its buttons,
        #: and every message seen until then (the question as the person saw it)
        self.click, self.asked = click, None
        self.seen: list[dict] = []

    def read(self, request: dict) -> dict:
        cells = CELLS if request.get("outputs", True) else [{**c, "outputs": []} for c in CELLS]
        return {"path": "nb.ipynb", "dirty": True, "kernel": "python3", "cells": cells}

    def send(self, comm_id: str, data: dict) -> None:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        msg["header"]["subshell_id"] = self.subshell
        self.kc.shell_channel.send(msg)

    def press(self, description: str) -> None:
        """Click the approval card's button `description`, as JupyterLab sends it."""
        (button,) = opened(self.seen, lambda state: state.get("description") == description)
        click = {"method": "custom", "content": {"event": "click"}}
        self.send(button["content"]["comm_id"], click)

    def turn(self, calls: list, folder: Path, mode: str = "build") -> dict:
        """Run a prompt cell that makes `calls`; the turn's record."""
        (folder / "calls.json").write_text(json.dumps(calls))
        msgs = self.run(f"%%elelem -p calls --mode {mode}\nfix it")
        return frozen(msgs)["metadata"]["elelem"]

    def run(self, code: str) -> list[dict]:
        """Run `code` in the turn's cell, answering the kernel's requests; its messages."""
        msg_id = send_in_cell(self.kc, code, TURN_CELL, allow_stdin=False)
        msgs = []
        comm_id = None
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=60)
            except Empty:
                raise AssertionError("the turn never ended") from None
            content = msg["content"]
            self.seen.append(msg)
            if self.click and self.asked is None and buttons_shown(self.seen):
                self.asked = list(self.seen)
                self.press(self.click)
            if msg["msg_type"] == "comm_open" and content["target_name"] == "elelem.notebook":
                check("elelem.notebook", "open", content["data"])
                self.opened = content["data"]
                comm_id = content["comm_id"]
                if self.hello:
                    self.send(comm_id, {"type": "hello"})
            elif msg["msg_type"] == "comm_msg" and content["comm_id"] == comm_id:
                request = content["data"]
                check("elelem.notebook", "from_kernel", request)  # as the schema says
                self.send(comm_id, {"id": request["id"], "ack": True})
                if request["op"] != "ping":  # pings, while the person is asked: acked
                    self.requests.append(request)
                    answer = self.answers[request["op"]](request)
                    self.send(comm_id, {"id": request["id"], "result": answer})
            if msg["parent_header"].get("msg_id") == msg_id:
                msgs.append(msg)
                if msg["msg_type"] == "status" and content["execution_state"] == "idle":
                    break
        assert reply_to(self.kc, msg_id)["content"]["status"] == "ok"
        return msgs


def results(record: dict) -> list[dict]:
    return [json.loads(c["result"]) for c in record["rounds"][0]["calls"]]


def test_read_sees_the_notebook_as_shown(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    front = Frontend(kc, subshell)
    record = front.turn([["notebook_read", {}]], folder)
    assert front.opened == {"v": 1, "cell": TURN_CELL, "turn": None}
    assert record["rounds"][0]["text"] == "reachable: True"
    (result,) = results(record)
    assert result["ok"] is True, result
    assert result["open"] is True and result["unsaved_changes"] is True
    cells = result["cells"]
    assert [c["id"] for c in cells] == ["aaa", "bbb", "ccc", TURN_CELL]
    assert cells[0]["source"] == "# Unsaved title"
    assert cells[1]["execution_count"] == 3
    assert cells[1]["outputs"][0].startswith("ZeroDivisionError: division by zero")
    assert "\x1b" not in cells[1]["outputs"][0]
    assert cells[3].get("this_turn") is True and "this_turn" not in cells[1]
    # named to the person as they see them: the model is told so, and how
    assert [c["shown_as"] for c in cells] == [
        "the 1st cell",
        "cell [3]",
        "the 3rd cell",
        "the 4th cell",
    ]
    assert "name it as its shown_as says (cell [5]" in (folder / "system.txt").read_text()


def test_edit_asks_in_the_cell_and_a_rejection_reaches_the_model(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    edits: list[dict] = []

    def decide(request):
        edits.append(request)
        if request["action"] == "replace":
            return {"decision": "accepted"}
        return {"decision": "rejected", "reason": "keep the title"}

    front = Frontend(kc, subshell, edit=decide)
    calls = [
        ["notebook_edit", {"cell": "bbb", "old": "1/0", "new": "1/1"}],
        ["notebook_edit", {"cell": 0, "delete": True}],
    ]
    record = front.turn(calls, folder)
    fixed, deleted = results(record)
    assert edits[0]["ask"] is True and edits[0]["cell"] == "bbb"
    # the card and the diff box name the cell as the person sees it, and where it is
    assert edits[0]["label"] == "cell [3]" and edits[0]["where"] == "above"
    assert edits[1]["label"] == "the 1st cell"
    said = json.dumps([m["content"] for m in front.seen if m["msg_type"] == "comm_msg"])
    assert "waiting for you: cell [3] above" in said  # the card, while the diff waited
    assert edits[0]["before"] == "x = 1/0" and edits[0]["source"] == "x = 1/1"
    assert edits[0]["turn"] == record["turn"]
    assert fixed["ok"] is True and fixed["decision"] == "accepted"
    assert (
        "-x = 1/0" in fixed["diff"] and "+x = 1/1" in fixed["diff"] and "cell [3]" in fixed["diff"]
    )
    assert edits[1]["action"] == "delete" and edits[1]["before"] == "# Unsaved title"
    assert deleted["ok"] is False and "keep the title" in deleted["error"]
    (change,) = record["changes"]  # the accepted edit, kept to undo it; not the rejected one
    assert change == {
        "kind": "cell",
        "action": "replace",
        "cell": "bbb",
        "index": 1,
        "before": "x = 1/0",
        "after": "x = 1/1",
        "cell_type": "code",
        "from_index": 1,
        "label": "cell [3]",  # as the person saw it: its prompt said [3]
    }


def test_auto_applies_at_once(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    edits: list[dict] = []
    front = Frontend(kc, subshell, edit=lambda r: edits.append(r) or {"decision": "applied"})
    calls = [["notebook_edit", {"insert": "after", "cell": "bbb", "source": "print(x)"}]]
    record = front.turn(calls, folder, mode="auto")
    (result,) = results(record)
    assert result["ok"] is True, result
    assert edits[0]["ask"] is False and edits[0]["action"] == "insert"
    assert edits[0]["after"] == "bbb" and edits[0]["source"] == "print(x)"
    assert edits[0]["id"] == 2 and edits[0]["new_id"] == result["cell"]["id"]
    assert result["cell"]["index"] == 2  # right after bbb


def test_the_turn_cell_is_not_edited(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    front = Frontend(kc, subshell)
    record = front.turn([["notebook_edit", {"cell": TURN_CELL, "source": "x"}]], folder)
    (result,) = results(record)
    assert result["ok"] is False and "this turn runs from" in result["error"]


def test_no_answer_is_a_clear_failure(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    front = Frontend(kc, subshell, hello=False)
    record = front.turn([["notebook_read", {}]], folder)
    (result,) = results(record)
    assert result["ok"] is False and "no answer from the open notebook" in result["error"]


def test_without_the_extension_the_model_is_told(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, [])
    front = Frontend(kc, subshell)
    record = front.turn([["notebook_read", {}]], folder)
    assert front.opened is None
    assert record["rounds"][0]["text"] == "reachable: False"
    (result,) = results(record)
    assert result["ok"] is False and "not reachable" in result["error"]


def test_run_in_the_persons_namespace_shows_outputs_in_the_cell(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    shown: list[dict] = []
    front = Frontend(kc, subshell, outputs=lambda r: shown.append(r) or {"shown": True})
    record = front.turn([["notebook_run", {"cells": ["ccc"]}]], folder, mode="auto")
    (result,) = results(record)
    assert result["ok"] is True, result
    (cell,) = result["cells"]
    assert cell["id"] == "ccc" and cell["outputs"] == [
        "stdout: printed 42\n",
        f"Out[{cell['execution_count']}]: 42",
    ]
    (request,) = shown
    assert request["cell"] == "ccc" and request["execution_count"] == cell["execution_count"]
    assert [o["output_type"] for o in request["outputs"]] == ["stream", "execute_result"]
    reply, msgs = run(kc, "print(answer)")  # the person's namespace has what the cell made
    assert [m["content"]["text"] for m in msgs if m["msg_type"] == "stream"] == ["42\n"]


def test_run_asks_with_each_cells_source_and_runs_exactly_that(kernel, folder):
    """Approving notebook_run on the open notebook shows the code of each cell it runs,
    read before the question; what runs is that code, not a later read of the cell."""
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    reads: list[dict] = []

    def read(request):
        reads.append(request)
        source = "approved = 40 + 2" if len(reads) == 1 else "approved = 'changed after the yes'"
        cells = [{**c, "source": source} if c["id"] == "ccc" else c for c in CELLS]
        return {"path": "nb.ipynb", "dirty": True, "kernel": "python3", "cells": cells}

    shown: list[dict] = []
    front = Frontend(
        kc,
        subshell,
        click="Allow",
        read=read,
        outputs=lambda r: shown.append(r) or {"shown": True},
    )
    record = front.turn([["notebook_run", {"cells": ["ccc"]}]], folder, mode="verify")
    (result,) = results(record)
    assert result["ok"] is True, result
    assert front.asked is not None, "no approval was asked"
    question = json.dumps([m["content"] for m in front.asked])
    # the cell named as the person sees it (no count yet: its place), never by its id
    assert "--- the 3rd cell ---" in question and "approved = 40 + 2" in question
    assert "(id ccc)" not in question
    assert len(reads) == 1  # read once, before the question; never again
    assert [r["cell"] for r in shown] == ["ccc"]
    reply, msgs = run(kc, "print(approved)")
    assert [m["content"]["text"] for m in msgs if m["msg_type"] == "stream"] == ["42\n"]


def test_run_stops_at_the_first_error(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    shown: list[dict] = []
    front = Frontend(kc, subshell, outputs=lambda r: shown.append(r) or {"shown": True})
    record = front.turn([["notebook_run", {"cells": ["ccc", "bbb"]}]], folder, mode="auto")
    (result,) = results(record)
    assert result["ok"] is False and "ZeroDivisionError" in result["error"]
    assert result["not_run"] == [2] and [c["id"] for c in result["cells"]] == ["bbb"]
    assert shown[0]["outputs"][-1]["ename"] == "ZeroDivisionError"


def test_run_never_runs_a_prompt_cell(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    front = Frontend(kc, subshell)
    record = front.turn([["notebook_run", {"cells": [TURN_CELL]}]], folder, mode="auto")
    (result,) = results(record)
    assert result["ok"] is False and "never runs prompts" in result["error"]


def test_undo_reverts_files_and_cells_unchanged_since(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    (folder / "kept.md").write_text("before\n")
    front = Frontend(kc, subshell, edit=lambda r: {"decision": "applied"})
    calls = [
        ["write", {"path": "made.md", "content": "new\n"}],
        ["write", {"path": "kept.md", "content": "after\n"}],
        ["write", {"path": "touched.md", "content": "agent\n"}],
        ["notebook_edit", {"cell": "bbb", "source": "x = 2"}],
    ]
    record = front.turn(calls, folder, mode="auto")
    assert [c["kind"] for c in record["changes"]] == ["file", "file", "file", "cell"]
    (folder / "touched.md").write_text("the person changed it since\n")
    reverts: list[dict] = []

    def revert(change):
        reverts.append(change)
        return {"reverted": True}

    marked: list[dict] = []
    undoer = Frontend(kc, subshell, revert=revert, mark_undone=lambda r: marked.append(r) or {})
    msgs = undoer.run("%elelem /undo")
    said = "".join(json.dumps(m["content"]) for m in msgs)
    assert not (folder / "made.md").exists()
    assert (folder / "kept.md").read_text() == "before\n"
    assert (folder / "touched.md").read_text() == "the person changed it since\n"
    assert "changed since the turn" in said and "cannot be restored" in said
    assert [m["turn"] for m in marked] == [record["turn"]]  # the saved record says so too
    (change,) = reverts
    assert change["cell"] == "bbb" and change["before"] == "x = 1/0" and change["after"] == "x = 2"
    again = Frontend(kc, subshell).run("%elelem /undo")
    assert "nothing to undo" in "".join(json.dumps(m["content"]) for m in again)

    forward: list[dict] = []
    redoer = Frontend(
        kc,
        subshell,
        revert=lambda c: forward.append(c) or {"reverted": True},
        mark_undone=lambda r: marked.append(r) or {},
    )
    said = "".join(json.dumps(m["content"]) for m in redoer.run("%elelem /redo"))
    assert (folder / "made.md").read_text() == "new\n"
    assert (folder / "kept.md").read_text() == "after\n"
    assert (folder / "touched.md").read_text() == "the person changed it since\n"
    assert "Redid the turn" in said and "changed since the undo" in said
    (cell,) = forward  # the cell goes forward: what the turn wrote, where the undo left it
    assert cell["cell"] == "bbb" and cell["before"] == "x = 2" and cell["after"] == "x = 1/0"
    assert marked[-1]["turn"] == record["turn"] and marked[-1]["undone"] is False
    done = Frontend(kc, subshell).run("%elelem /redo")
    assert "nothing to redo" in "".join(json.dumps(m["content"]) for m in done)


def test_hundreds_of_cells_stay_bounded(kernel, folder):
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    many = [
        {
            "id": f"c{i}",
            "cell_type": "code",
            "source": f"# cell {i}\n" + "x" * 5_000,
            "execution_count": i,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": "y" * 5_000}],
        }
        for i in range(400)
    ] + [CELLS[-1]]

    def read(request):
        return {"path": "big.ipynb", "dirty": False, "kernel": "python3", "cells": many}

    front = Frontend(kc, subshell, read=read)
    front.turn([["notebook_read", {}]], folder)
    (sent,) = json.loads((folder / "results.json").read_text())  # what the model got
    result = json.loads(sent)
    assert result["ok"] is True, str(result)[:500]
    assert result["count"] == 401
    assert 0 < len(result["cells"]) < 401 and "notebook_read with cells=" in result["truncated"]
    assert len(json.dumps(result)) < 200_000
    assert all(len(o) < 3_000 for c in result["cells"] for o in c.get("outputs", []))


def test_what_the_agents_python_displays_goes_to_the_turns_cell(kernel, folder):
    """The frontend's hello (a comm message on a subshell) sets ipykernel's fallback parent;
    the python tool's thread must still publish under the turn's own request."""
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    code = "from IPython.display import HTML, display\ndisplay(HTML('<b>shown here</b>'))"
    (folder / "calls.json").write_text(json.dumps([["python", {"code": code}]]))
    msgs = Frontend(kc, subshell).run("%%elelem -p calls --mode auto\nfix it")
    shown = [m for m in msgs if m["msg_type"] == "display_data"]
    assert any("<b>shown here</b>" in m["content"]["data"].get("text/html", "") for m in shown)


def test_run_shows_a_cells_displays_in_that_cell_and_sends_its_images(kernel, folder):
    """notebook_run of a cell that displays an image and plots: the displays land in that
    cell (not in the prompt cell), and the model gets the images as from any tool."""
    pytest.importorskip("matplotlib")
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    plot = {
        "id": "plot",
        "cell_type": "code",
        "source": "import matplotlib.pyplot as plt\n"
        "from IPython.display import HTML, display\n"
        "display(HTML('<b>a table</b>'))\n"
        "plt.plot([1, 2, 30, 4])",
        "execution_count": None,
        "outputs": [],
    }

    def read(request):
        return {"path": "nb.ipynb", "dirty": False, "kernel": "python3", "cells": [plot]}

    shown: list[dict] = []
    front = Frontend(kc, subshell, read=read, outputs=lambda r: shown.append(r) or {"shown": 1})
    (folder / "calls.json").write_text(json.dumps([["notebook_run", {"cells": ["plot"]}]]))
    msgs = front.run("%%elelem -p calls --mode auto -o vision=on\nrun it")
    (result,) = results(frozen(msgs)["metadata"]["elelem"])
    assert result["ok"] is True, result
    (cell,) = result["cells"]
    assert cell["outputs"][0] == "display: a table [also text/html (14 B)]"
    assert cell["outputs"][1].startswith("display: <Figure") and "[image 1]" in cell["outputs"][1]
    (request,) = shown
    kinds = [(o["output_type"], sorted(o.get("data", {}))) for o in request["outputs"]]
    assert ("display_data", ["text/html", "text/plain"]) in kinds
    assert ("display_data", ["image/png", "text/plain"]) in kinds
    assert json.loads((folder / "images.json").read_text()) == [["image/png"]]
    in_prompt_cell = [
        m["content"]["data"]
        for m in msgs
        if m["msg_type"] == "display_data"
        and ("image/png" in m["content"]["data"] or "<b>a table" in str(m["content"]["data"]))
    ]
    assert in_prompt_cell == []  # the cell it ran shows them


WIDGET = "application/vnd.jupyter.widget-view+json"


def widget_comms(kc) -> set[str]:
    """The ids of the kernel's open `jupyter.widget` comms (a page asks this on reload)."""
    request = kc.session.msg("comm_info_request", {"target_name": "jupyter.widget"})
    kc.shell_channel.send(request)
    reply = reply_to(kc, request["header"]["msg_id"])
    return set(reply["content"]["comms"])


def printed_soon(kc, code: str, what: str) -> str:
    """What `code` prints, once it prints something (it prints nothing until the link's
    background thread has made `what`)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        reply, msgs = run(kc, code)
        said = "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream").strip()
        if said:
            return said
        time.sleep(0.2)
    raise AssertionError(f"no {what} a minute after the link")


def standing_widget(kc) -> str:
    """The comm id of the standing widget the link opens, once the warm-up has opened it."""
    code = (
        "from elelem_kernel.jupyter import standing_widget as s\n"
        "print(s._standing.model_id if s._standing else '')"
    )
    return printed_soon(kc, code, "standing widget")


def frame_ahead(kc) -> set[str]:
    """The comm ids of the live view's frame made ahead for the next turn, once made."""
    code = (
        "from elelem_kernel.render import view_frame as f\n"
        "print(*(w.model_id for w in f._ahead.frame.widgets()) if f._ahead.frame else [])"
    )
    return set(printed_soon(kc, code, "frame made ahead").split())


def test_the_link_keeps_one_widget_open_through_the_turns(kernel, folder):
    """The link opens one widget (a `Layout`, shown nowhere) and keeps it: JupyterLab keeps
    the `jupyter.widget` target's comm subshell while one of its comms is open, so each
    turn's live view finds it made instead of making one and deleting it after."""
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    standing = standing_widget(kc)
    frame = frame_ahead(kc)
    assert widget_comms(kc) == {standing} | frame
    reply, msgs = run(kc, "from elelem_kernel.jupyter import standing_widget as s\ns._standing")
    assert "Layout(" in texts(msgs), texts(msgs)
    front = Frontend(kc, subshell)
    front.turn([["notebook_read", {}]], folder)
    made = {m["content"]["comm_id"] for m in front.seen if m["msg_type"] == "comm_open"}
    assert made and standing not in made  # the turn's cards made their own widgets
    restore(kc, ["notebook"])  # a page reloaded, or the next cell's restore
    after = frame_ahead(kc)  # the next turn's, made as this one ended
    assert widget_comms(kc) == {standing} | after  # the turn's closed; no second standing one
    assert standing_widget(kc) == standing and not after & frame


def test_a_turn_shows_the_frame_made_ahead(kernel, folder):
    """The live view's box, body, lines, layout and style are made once the page is linked,
    and after each turn for the next: a page makes their models between turns, not while
    the person waits (the slowest part of a first turn in a fresh page)."""
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    for _ in range(2):  # the first turn's frame, made at the link; then one made at its end
        frame = frame_ahead(kc)
        front = Frontend(kc, subshell)
        front.turn([["notebook_read", {}]], folder)
        made = {m["content"]["comm_id"] for m in front.seen if m["msg_type"] == "comm_open"}
        shown = [
            m["content"]["data"][WIDGET]["model_id"]
            for m in front.seen
            if m["msg_type"] == "display_data" and WIDGET in m["content"]["data"]
        ]
        assert len(shown) == 1 and shown[0] in frame  # its box, opened before the turn
        assert not made & frame


def test_the_link_opens_before_the_live_view(kernel, folder):
    """The turn's `elelem.notebook` comm opens before the live view's widgets: the page
    handles messages in order, and a fresh page's first widgets take it tens of ms, which
    the hello (and so the turn's first read) would wait for."""
    km, kc, subshell = kernel
    restore(kc, ["notebook"])
    standing_widget(kc)  # opened after the link's imports: not one of this turn's
    front = Frontend(kc, subshell)
    front.turn([["notebook_read", {}]], folder)
    start = next(i for i, m in enumerate(front.seen) if m["msg_type"] == "execute_input")
    opens = [
        m["content"]["target_name"]
        for m in front.seen[start:]
        if m["msg_type"] == "comm_open"
        and (m["content"]["target_name"] == "jupyter.widget" or m["content"]["data"].get("cell"))
    ]
    assert "jupyter.widget" in opens, opens
    assert opens[0] == "elelem.notebook", opens  # the turn's own, not the standing one
