"""The Elelem kernel reads its notebook while it starts; the first prompt restores what the
file holds then, whether or not it changed since (jupyter/restore_ahead.py)."""

from __future__ import annotations

import json
import sys

import pytest
from jupyter_client.manager import start_new_kernel

from tests.e2e.kernels import isolated_env, run, texts
from tests.jupyter.test_restore import record, three_turns, turn_cell, write

pytestmark = pytest.mark.kernel

#: A cell that waits for the read and says whether it holds the file's cells.
READ_AHEAD = (
    "%%py\nfrom elelem_kernel.jupyter import restore_ahead\n"
    "restore_ahead._thread.join(30)\nprint('read ahead:', restore_ahead._read is not None)"
)


@pytest.fixture
def kernel(tmp_path, tmp_path_factory, monkeypatch):
    """Start an Elelem kernel on `tmp_path / nb.ipynb` (three turns); its client."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "share" / "kernels" / "elelem"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "elelem_kernel.jupyter", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(json.dumps({"argv": argv, "display_name": "E"}))
    monkeypatch.setenv("JUPYTER_PATH", str(root / "share"))
    three_turns(tmp_path / "nb.ipynb")
    env = isolated_env(root, ELELEM_NOTEBOOK=str(tmp_path / "nb.ipynb"), ELELEM_PROVIDER="echo")
    km, kc = start_new_kernel(kernel_name="elelem", env=env, cwd=str(tmp_path))
    try:
        reply, outputs = run(kc, READ_AHEAD)
        assert reply["content"]["status"] == "ok"
        assert "read ahead: True" in texts(outputs)
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_first_prompt_restores_the_turns_read_at_start(kernel):
    reply, outputs = run(kernel, "a fourth")
    assert reply["content"]["status"] == "ok"
    assert "restored 3 turns from nb.ipynb" in texts(outputs)


def test_a_notebook_saved_after_the_start_is_restored_as_saved(kernel, tmp_path):
    write(tmp_path / "nb.ipynb", [turn_cell(record(f"t{i}"), f"cell-{i}") for i in range(1, 6)])
    reply, outputs = run(kernel, "a sixth")
    assert reply["content"]["status"] == "ok"
    assert "restored 5 turns from nb.ipynb" in texts(outputs)
