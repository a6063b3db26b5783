"""Re-run the example notebooks in place on the demo model, so their saved outputs are current.

    .venv/bin/python scripts/run_notebooks.py [notebooks/quickstart.ipynb ...]

Each notebook runs headless (nbclient) in a temporary copy of notebooks/ (outside the git
repository, so the agent's workspace is that folder, as for a person who downloaded it),
with no API keys, the demo model at full speed and ELELEM_NOTEBOOK pointing at the copy.
Run timings are dropped so a re-run changes only what the turns changed. The Elelem
kernel must be installed (scripts/lab.sh does it).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def run(source: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "notebooks"
        shutil.copytree(source.parent, folder)
        path = folder / source.name
        execute(path)
        shutil.copyfile(path, source)
    print(f"ran {source.relative_to(NOTEBOOKS.parent)}")


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for name in ("ELELEM_PROVIDER", "ELELEM_MODEL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    env.update(ELELEM_NOTEBOOK=str(path), ELELEM_DEMO_DELAY="0", OLLAMA_HOST="http://127.0.0.1:9")
    client = NotebookClient(
        nb,
        timeout=300,
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    nbformat.write(nb, path)  # the restore reads the file: start from a file without records
    client.execute(env=env)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)


if __name__ == "__main__":
    for arg in sys.argv[1:] or sorted(NOTEBOOKS.glob("*.ipynb")):
        run(Path(arg).resolve())
