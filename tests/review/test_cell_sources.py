"""notebooks/code_review.ipynb runs in a real kernel and shows the planted bugs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "code_review.ipynb"


@pytest.mark.kernel
def test_code_review_notebook_runs_and_finds_the_planted_bugs(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ELELEM_DEMO_DELAY", "0")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb,
        timeout=120,
        iopub_timeout=60,  # nbclient's 4 s loses outputs on a loaded machine
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    text = "\n".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
    )
    assert "| major | `prices.py:4` |" in text
    assert "| blocker | `report.ipynb cell show line 2` |" in text
    assert "exit code: 1" in text and "exit code: 2" in text
    magic = nb.cells[-1].outputs[-1]
    record = magic["metadata"]["elelem"]
    assert sorted((f["path"], f["line"]) for f in record["findings"]) == [
        ("prices.py", 4),
        ("report.ipynb", 2),
    ]
    assert record["review"]["reviewed"] == ["prices.py", "report.ipynb"]
    assert "## cell 2 id=show (code): modified" in text and "4.0" not in text.split("## cell 2")[1]
