"""The example notebooks run headless from top to bottom and say what they promise.

Each notebook of notebooks/ is executed with nbclient in a temp copy (outputs stripped,
outside git), in a private Jupyter world with the Elelem kernel installed, on the demo
model with no delay. The committed copies must carry outputs, so they read on GitHub.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.e2e.browser.lab import NOTEBOOKS, jupyter_env

pytestmark = pytest.mark.kernel

CELL_TIMEOUT = 120
ALL = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return jupyter_env(tmp_path_factory.mktemp("jupyter"))


def execute(name: str, folder: Path, env: dict[str, str], monkeypatch) -> Any:
    """Run notebooks/NAME in a fresh copy under `folder`; the executed notebook."""
    shutil.copytree(NOTEBOOKS, folder, dirs_exist_ok=True)
    path = folder / name
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, path)
    env = {**env, "ELELEM_NOTEBOOK": str(path)}
    env.pop("ELELEM_PROVIDER", None)  # with no key, the default must be the demo
    for key in ("JUPYTER_PATH", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR"):
        monkeypatch.setenv(key, env[key])  # the kernel manager runs in this process
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        iopub_timeout=60,  # nbclient's 4 s loses outputs on a loaded machine
        kernel_name=nb.metadata.kernelspec.name,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute(env=env)
    return nb


def records(cell: Any) -> list[dict]:
    """The turn records carried by a cell's outputs."""
    return [
        o.metadata["elelem"]
        for o in cell.get("outputs", [])
        if "elelem" in (o.get("metadata") or {})
    ]


def text(cell: Any) -> str:
    parts = []
    for o in cell.get("outputs", []):
        parts.append(o.get("text", ""))
        parts.extend(str(v) for k, v in (o.get("data") or {}).items() if k.startswith("text/"))
    return "\n".join(parts)


def code_cell(nb: Any, start: str) -> Any:
    return next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(start))


def check_clean(nb: Any) -> None:
    """No error output anywhere; every turn froze with a v1 record and a reply."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{cell.source[:40]!r}: {output.get('evalue')}"
        for record in records(cell):
            assert record["v"] == 1
            assert record["reply"], f"{cell.source[:40]!r} froze without a reply"
            assert record["stop"] == "end_turn", record.get("error")


@pytest.mark.parametrize("name", ALL)
def test_committed_notebook_carries_outputs(name: str):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and any(c.outputs for c in code), f"{name} was committed without outputs"
    assert any(records(c) for c in code), f"{name} carries no frozen turn"
    assert "widgets" not in nb.metadata, f"{name} carries dead widget state (strip it)"
    check_clean(nb)


def test_quickstart(jupyter, tmp_path, monkeypatch):
    nb = execute("quickstart.ipynb", tmp_path, jupyter, monkeypatch)
    check_clean(nb)
    ask = code_cell(nb, "%%elelem\nwhat is in this folder?")
    (record,) = records(ask)
    assert record["provider"] == "demo"
    assert "demo model" in record["reply"]
    calls = [c for r in record["rounds"] for c in r["calls"]]
    assert [(c["name"], c["ok"]) for c in calls] == [("list", True), ("read", True)]
    assert "demo" in text(ask).lower()
    follow = records(code_cell(nb, "%%elelem\nand what"))[0]
    assert follow["conversation"] == record["conversation"]
    assert "what is in this folder?" in follow["reply"], "the second turn remembers the first"
    assert text(code_cell(nb, "total")).strip() == "40.3", "the agent's variable is shared"
    assert "/help" in text(code_cell(nb, "%elelem /help"))
    declined = records(code_cell(nb, "%%elelem\nwrite the file"))[0]
    assert [c["ok"] for r in declined["rounds"] for c in r["calls"]] == [False]
    assert not (tmp_path / "notes.md").exists(), "no one approved the write"


def test_elelem_kernel(jupyter, tmp_path, monkeypatch):
    nb = execute("elelem_kernel.ipynb", tmp_path, jupyter, monkeypatch)
    check_clean(nb)
    assert nb.metadata.kernelspec.name == "elelem"
    first = records(code_cell(nb, "what is in this folder?"))[0]
    assert "demo model" in first["reply"]
    second = records(code_cell(nb, "which of those files"))[0]
    assert second["conversation"] == first["conversation"]
    assert "/mode" in text(code_cell(nb, "/help"))
    assert "Lagos" in text(code_cell(nb, "%%py\nbiggest"))
    plot = code_cell(nb, "plot the squares")
    [record] = records(plot)
    assert "I received an image from `python`" in record["reply"]
    pictures = [o for o in plot.outputs if "image/png" in o.get("data", {})]
    assert pictures == [], "no display of its own under the turn: its card shows the plot"
    [turn] = [o for o in plot.outputs if "elelem" in o.get("metadata", {})]
    assert turn["data"]["text/html"].count("data:image/png;base64,") == 1  # once, in its card


def test_custom_provider(jupyter, tmp_path, monkeypatch):
    nb = execute("custom_provider.ipynb", tmp_path, jupyter, monkeypatch)
    check_clean(nb)
    (record,) = records(code_cell(nb, "%%elelem -p shouty"))
    assert record["provider"] == "shouty"
    assert "HELLO FROM A PLUGIN!" in record["reply"]
    assert "shout" in text(code_cell(nb, "%elelem /tools"))
    assert "HELLO FROM PYTHON!" in text(code_cell(nb, "elelem_kernel.ask"))


@pytest.mark.skipif(not (NOTEBOOKS / "code_review.ipynb").exists(), reason="not written yet")
def test_code_review(jupyter, tmp_path, monkeypatch):
    nb = execute("code_review.ipynb", tmp_path, jupyter, monkeypatch)
    check_clean(nb)
    assert any(records(c) for c in nb.cells if c.cell_type == "code")


def test_help_reads_as_a_table():
    nb = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    assert "<table" in text(code_cell(nb, "%elelem /help"))


def test_mcp(jupyter, tmp_path, monkeypatch):
    nb = execute("mcp.ipynb", tmp_path, jupyter, monkeypatch)
    check_clean(nb)
    listings = [text(c) for c in nb.cells if c.cell_type == "code" and c.source == "%elelem /mcp"]
    assert "skipped: the folder is not trusted" in listings[0]
    assert "`mcp__time__get_current_time` (read)" in listings[1]
    (record,) = records(code_cell(nb, "%%elelem --mode plan"))
    [made] = [c for r in record["rounds"] for c in r["calls"]]
    assert made["name"] == "mcp__time__get_current_time" and made["ok"], made
    assert "The MCP server **time** answered" in record["reply"]
    assert not (tmp_path / ".mcp.json").exists(), "the notebook cleans up after itself"
