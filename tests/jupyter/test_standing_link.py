"""The kernel links the page at its restore, before the first turn (issue 36 item 1).

A restore from the extension that offers the open notebook opens the standing
`elelem.notebook` comm once (its subshell then outlives each turn's comm) and starts the
first turn's imports on a background thread; a restore without the feature opens no
comm. The browser test (tests/e2e/browser/test_first_turn.py) checks the subshell exists
in a real JupyterLab before the first turn.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from elelem_kernel.assembly import servers_ahead
from elelem_kernel.jupyter import notebook_comm, restore_comm, standing_widget, warm_up
from elelem_kernel.render import view_frame
from tests.comm_schemas import check, schema


class Opened:
    """A kernel-side comm `create_comm` made: what it opened with, its close callback."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.primary = kwargs.get("primary", True)
        self.data: Any = None
        self.on_closed: Any = None
        self.closed = False

    def on_close(self, callback: Any) -> None:
        self.on_closed = callback

    def open(self, data: Any = None) -> None:
        self.data = data
        self.opened_at = next(_order)

    def send(self, data: Any) -> None:
        pass

    def close(self) -> None:
        self.closed = True
        self.closed_at = next(_order)


_order = itertools.count()  #: the order the comms were opened and closed in


@dataclass
class Made:
    comms: list[Opened] = field(default_factory=list)
    warmed: int = 0  #: warm-ups started
    then: list[Any] = field(default_factory=list)  #: what each warm-up calls after its imports


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> Made:
    """The comms the kernel opens (no standing one to begin with) and the warm-ups it
    starts (counted, not run)."""
    import comm as comm_package

    found = Made()

    def create_comm(**kwargs: Any) -> Opened:
        found.comms.append(Opened(**kwargs))
        return found.comms[-1]

    def start(then: Any = None) -> None:
        found.warmed += 1
        found.then.append(then)

    monkeypatch.setattr(comm_package, "create_comm", create_comm)
    monkeypatch.setattr(notebook_comm, "_standing", None)
    monkeypatch.setattr(warm_up, "start", start)
    return found


def restore(features_example: int) -> None:
    data = schema("elelem.restore")["$defs"]["open"]["examples"][features_example]
    restore_comm._opened(SimpleNamespace(user_ns={}), _Closing(), {"content": {"data": data}})


class _Closing:
    def send(self, data: Any) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_restore_with_the_notebook_feature_opens_the_standing_comm(made):
    restore(0)  # features: ["notebook"]
    [standing] = made.comms
    assert standing.kwargs["target_name"] == "elelem.notebook"
    assert check("elelem.notebook", "open", standing.data) == "NotebookOpen"
    assert standing.data["cell"] is None  # no page answers on it: it holds the subshell
    assert standing.primary and not standing.closed and made.warmed == 1


def test_each_restore_opens_the_standing_comm_anew_then_closes_the_last(made):
    restore(0)
    restore(0)  # a page reloaded: it knows of comms opened from now on only
    first, second = made.comms
    assert first.closed and not second.closed and second.data == first.data
    assert second.opened_at < first.closed_at  # a page that knew the first keeps a
    # comm of the target open throughout, and so its subshell
    assert made.warmed == 2  # warm_up.start runs once itself


def test_the_standing_comm_opens_again_after_a_page_closed_it(made):
    restore(0)
    made.comms[0].on_closed({"content": {}})  # a page without the extension closes it
    restore(0)
    assert len(made.comms) == 2 and made.comms[1].data == made.comms[0].data


def readied(then: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the warm-up's `then` readies, in order (each recorded, not made)."""
    done: list[str] = []
    monkeypatch.setattr(standing_widget, "stand", lambda: done.append("standing widget"))
    monkeypatch.setattr(view_frame, "make_ahead", lambda: done.append("frame"))
    monkeypatch.setattr(servers_ahead, "ask_windows", lambda: done.append("windows"))
    then()
    return done


def test_a_restore_without_the_notebook_feature_opens_no_comm(made, monkeypatch):
    restore(1)  # features: []
    assert made.comms == [] and made.warmed == 1  # the imports still help its first turn
    # no standing widget (no comm subshells to keep), but its first turn's frame, then
    # the model servers' windows (after what the page draws: they wait for no widget)
    assert readied(made.then[0], monkeypatch) == ["frame", "windows"]


def test_with_the_notebook_feature_the_warm_up_then_opens_the_standing_widget(made, monkeypatch):
    restore(0)
    assert readied(made.then[0], monkeypatch) == ["standing widget", "frame", "windows"]


WARM = """
import json, sys, threading
from elelem_kernel.jupyter import warm_up
from nbformat import validator
called = []

def then(name):  # which call's, on which thread, every module imported by then
    return lambda: called.append(
        [name, threading.current_thread().name, all(m in sys.modules for m in warm_up.MODULES)]
    )

thread = warm_up.start(then=then("first"))
again = warm_up.start(then=then("again"))
thread.join(60)
print(json.dumps({
    "daemon": thread.daemon,
    "again": again is None,
    "then": called,
    "missing": [m for m in warm_up.MODULES if m not in sys.modules],
    "schema": bool(validator.validators),
}))
"""


def test_the_warm_up_imports_a_first_turns_modules_once_on_a_daemon_thread():
    done = subprocess.run(
        [sys.executable, "-c", WARM], capture_output=True, text=True, check=True, timeout=120
    )
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said == {
        "daemon": True,
        "again": True,
        "then": [["first", "elelem-warm-up", True]],  # after the imports, on that
        # thread; the second call's never
        "missing": [],
        "schema": True,
    }


#: The elelem modules a first turn imports after the warm-up: a magic's first prompt in a
#: notebook whose page sent its records, answered by the demo model (it lists the folder
#: and reads a file, as the quickstart's first cell does).
FIRST_IMPORTS = """
import json, os, sys, tempfile
os.chdir(tempfile.mkdtemp())
os.environ.update(HOME=os.getcwd(), ELELEM_PROVIDER="demo")
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "elelem_kernel")
from elelem_kernel.jupyter import restore_comm, warm_up
cells = [{"id": "aaa", "cell_type": "code", "outputs": []}]
restore_comm.receive(ip.user_ns, {"v": 1, "reason": "start", "path": "nb.ipynb",
    "root": os.getcwd(), "features": [], "notebook": {"cells": cells}})
warm_up.import_all()
before = set(sys.modules)
ip.run_cell_magic("elelem", "", "hello")
print(json.dumps(sorted(m for m in set(sys.modules) - before if m.startswith("elelem_kernel"))))
"""


def test_after_the_warm_up_a_first_turn_imports_no_elelem_module():
    done = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORTS],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


RENDER = """
import re, sys
from elelem_kernel.render.markdown import to_html
if sys.argv[1] == "warm":
    from elelem_kernel.jupyter import warm_up
    warm_up.import_all()
else:
    to_html("plain words")  # the renderer made, no rule used yet
compiled = []  # patterns re had not compiled yet (its cache misses: re._compiler, 3.11+)
original = re._compiler.compile
re._compiler.compile = lambda *args, **kwargs: compiled.append(args[0]) or original(*args, **kwargs)
to_html("## Plan\\n\\n1. **read** `a.py`\\n2. see [docs](https://x.org)\\n\\n> note\\n\\n"
        "| k | v |\\n|---|---|\\n| x | 1 |\\n\\n```python\\nprint(1)\\n```\\n")
print(len(compiled))
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="re._compiler is 3.11's")
@pytest.mark.parametrize("warm", [True, False])
def test_after_the_warm_up_a_first_reply_compiles_no_markdown_rule(warm):
    done = subprocess.run(
        [sys.executable, "-c", RENDER, "warm" if warm else "cold"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    compiled = int(done.stdout.strip().splitlines()[-1])
    assert (compiled == 0) if warm else (compiled > 0), compiled
