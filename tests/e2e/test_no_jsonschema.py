"""Restoring, appending a turn and the ACP session store never import jsonschema.

`import nbformat` imports jsonschema, and in a JupyterLab environment jsonschema compiles
rfc3987-syntax's grammars at import (2-7 s). These paths read and write notebook JSON
themselves (store/ipynb_json.py), so each is checked in a real process here: the
CLI's `ask --notebook`, the Elelem kernel restoring from its notebook, and the store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_client.manager import start_new_kernel

from tests.e2e.kernels import isolated_env, run, texts

pytestmark = pytest.mark.kernel

HEAVY = ("jsonschema", "nbformat")

ASK = """
import json, sys
from elelem_kernel.cli import main
from elelem_kernel.store import in_place

nb = sys.argv[1]
assert main(["ask", "--notebook", nb, "-p", "echo", "one"]) == 0  # a new file
assert main(["ask", "--notebook", nb, "-p", "echo", "two"]) == 0  # restore, append in place
in_place.forget(nb)  # as if another process wrote it: read and rewritten in full
assert main(["ask", "--notebook", nb, "-p", "echo", "three"]) == 0
print(json.dumps([m for m in {heavy!r} if m in sys.modules]))
"""

STORE = """
import json, sys
from elelem_kernel.render.static import bundle
from elelem_kernel.store import acp_sessions as store
from tests import records

for turn in ("t1", "t2"):
    record = records.record(turn, cell="c-" + turn)
    store.save_turn("s1", sys.argv[1], record, *bundle(record))
saved = store.load("s1")
assert saved.rebuilt.turns == 2, saved.rebuilt.turns
assert [s["id"] for s in store.listing()] == ["s1"], store.listing()
print(json.dumps([m for m in {heavy!r} if m in sys.modules]))
"""


def heavy_imports(code: str, arg: Path, env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code.format(heavy=HEAVY), str(arg)],
        cwd=Path(__file__).parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env.update(HOME=str(tmp_path / "home"), ELELEM_ACP_SESSIONS=str(tmp_path / "sessions"))
    return env


def test_ask_notebook_creates_restores_and_appends_without_jsonschema(tmp_path):
    path = tmp_path / "nb.ipynb"
    assert heavy_imports(ASK, path, cli_env(tmp_path)) == []
    cells = json.loads(path.read_text())["cells"]
    assert [c["source"][-1] for c in cells] == ["one", "two", "three"]  # an Elelem notebook
    import nbformat  # the file is one nbformat reads as valid

    nbformat.validate(nbformat.read(path, as_version=4))


def test_the_acp_session_store_saves_and_loads_without_jsonschema(tmp_path):
    assert heavy_imports(STORE, tmp_path, cli_env(tmp_path)) == []
    [saved] = list((tmp_path / "sessions").glob("*.ipynb"))
    import nbformat

    nbformat.validate(nbformat.read(saved, as_version=4))


@pytest.fixture
def kernel_env(tmp_path, tmp_path_factory, monkeypatch) -> dict[str, str]:
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "share" / "kernels" / "elelem"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "elelem_kernel.jupyter", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Elelem", "language": "elelem"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(root / "share"))
    return isolated_env(root, ELELEM_NOTEBOOK=str(tmp_path / "nb.ipynb"))


def test_a_kernel_restoring_its_notebook_does_not_import_jsonschema(tmp_path, kernel_env):
    path = tmp_path / "nb.ipynb"
    assert heavy_imports(ASK, path, cli_env(tmp_path)) == []  # three turns in the file
    km, kc = start_new_kernel(kernel_name="elelem", env=kernel_env, cwd=str(tmp_path))
    try:
        reply, outputs = run(kc, "and a fourth")
        assert reply["content"]["status"] == "ok"
        assert "restored 3 turns from nb.ipynb" in texts(outputs)
        code = f"%%py\nimport sys\nprint([m for m in {HEAVY!r} if m in sys.modules])"
        reply, outputs = run(kc, code)
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert "[]" in texts(outputs), texts(outputs)
