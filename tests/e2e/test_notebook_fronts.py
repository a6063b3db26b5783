"""Notebooks run headless with nbclient, then converted to HTML: the frozen turns survive."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from elelem_kernel.cli import install_command
from tests.e2e.kernels import isolated_env, trusted, workspace

pytestmark = pytest.mark.kernel
WIDGET = "application/vnd.jupyter.widget-view+json"


def execute(nb, folder, kernel_name, env):
    client = NotebookClient(
        nb,
        kernel_name=kernel_name,
        timeout=120,
        iopub_timeout=60,  # nbclient's 4 s loses outputs on a loaded machine
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute(env=env)
    return nb


def turns(cell):
    return [o for o in cell.outputs if "elelem" in o.get("metadata", {})]


def test_python_notebook_with_magic_cells(tmp_path):
    folder = workspace(tmp_path)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext elelem_kernel"),
        nbformat.v4.new_code_cell("%%elelem -p xss --mode auto\nshow me"),
        nbformat.v4.new_code_cell("%%elelem -p toucher\nmake a file"),
        nbformat.v4.new_code_cell("%elelem /usage"),
    ]
    execute(nb, folder, "python3", trusted(isolated_env(folder), folder))
    (xss,) = turns(nb.cells[1])
    assert set(xss.data) == {"text/html", "text/markdown", "text/plain"}
    assert WIDGET not in xss.data
    assert xss.metadata["elelem"]["stop"] == "end_turn"
    (denied,) = turns(nb.cells[2])
    call = denied.metadata["elelem"]["rounds"][0]["calls"][0]
    assert call["ok"] is False and "approval is needed" in call["result"]
    assert not (folder / "made.txt").exists()
    assert any("text/html" in o.get("data", {}) for o in nb.cells[3].outputs)

    path = folder / "ran.ipynb"
    nbformat.write(nb, path)
    html, _ = HTMLExporter().from_notebook_node(nbformat.read(path, as_version=4))
    assert "tool said" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<img src=x onerror" not in html and "<script>alert(2)" not in html
    assert "<details" in html and " · done · " in html


def test_elelem_kernel_notebook(tmp_path, monkeypatch):
    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
    folder = workspace(tmp_path / "work")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("hello from a prompt cell"),
        nbformat.v4.new_code_cell("/help"),
        nbformat.v4.new_code_cell("%%py\nprint(6 * 7)"),
    ]
    execute(
        nb,
        folder,
        "elelem",
        trusted(isolated_env(folder, JUPYTER_PATH=str(prefix / "share" / "jupyter")), folder),
    )
    (turn,) = turns(nb.cells[0])
    assert turn.metadata["elelem"]["reply"] == "hello from a prompt cell"
    assert "/provider" in str(nb.cells[1].outputs)
    assert nb.cells[2].outputs[0]["text"].strip() == "42"
    assert nb.metadata["language_info"]["name"] == "elelem"
