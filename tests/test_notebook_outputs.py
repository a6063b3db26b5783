"""The shipped notebooks' saved outputs hold no path of the machine that ran them.

A temp folder, a checkout or a home folder in an output is stale for every reader, and
tells a newcomer something other than what they will see (scripts/run_notebooks.py writes
such paths as a reader's).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))
MACHINE_PATH = re.compile(
    r"(?<![\w.~])/(?:tmp|work|home|root|private|var/folders|Users)/[^\s\"'<>`)]*"
)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_no_machine_paths_in_saved_outputs(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = [
        (index, match.group(0))
        for index, cell in enumerate(cells)
        for output in cell.get("outputs", [])
        for match in MACHINE_PATH.finditer(json.dumps(output))
    ]
    assert not found, f"{notebook.name}: re-run it with scripts/run_notebooks.py: {found[:5]}"


def test_the_scan_finds_what_it_looks_for():
    assert MACHINE_PATH.search('"workspace: `/tmp/tmp23i1aj7s/notebooks`"')
    assert MACHINE_PATH.search("/work/main/.venv/bin/python")
    assert not MACHINE_PATH.search("~/notebooks/quickstart.ipynb and https://example.com/tmp/x")
