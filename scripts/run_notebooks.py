"""Re-run the example notebooks in place on the demo model, so their saved outputs are current.

    .venv/bin/python scripts/run_notebooks.py [notebooks/quickstart.ipynb ...]

Each notebook runs headless (nbclient) in a temporary copy of notebooks/ (outside the git
repository, so the agent's workspace is that folder, as for a person who downloaded it),
with no API keys, the demo model at full speed and ELELEM_NOTEBOOK pointing at the copy.
Run timings are dropped so a re-run changes only what the turns changed. Paths of this
machine in the outputs would be stale anywhere else, so they are written as a reader's
would be: the temporary folder (the kernels' TMPDIR too) as `~`, so the notebooks read as
if run in `~/notebooks`, and this Python's prefix as `~/elelem-kernel/.venv`
(tests/test_notebook_outputs.py checks that no other path is left). The Elelem kernel must
be installed (scripts/lab.sh does it).
"""

from __future__ import annotations

import json
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
        root = Path(tmp).resolve()
        folder = root / "notebooks"
        shutil.copytree(source.parent, folder)
        (root / "tmp").mkdir()
        path = folder / source.name
        execute(path, root)
        shutil.copyfile(path, source)
    print(f"ran {source.relative_to(NOTEBOOKS.parent)}")


def execute(path: Path, root: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for name in ("ELELEM_PROVIDER", "ELELEM_MODEL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    env.update(ELELEM_NOTEBOOK=str(path), ELELEM_DEMO_DELAY="0", OLLAMA_HOST="http://127.0.0.1:9")
    env.update(TMPDIR=str(root / "tmp"))
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
        if cell.cell_type == "code":
            cell.outputs = [scrub(output, root) for output in cell.outputs]
    nbformat.write(nb, path)


def scrub(output: dict, root: Path) -> dict:
    """`output` with this machine's paths written as a reader's (see the module doc)."""
    text = json.dumps(output)
    for path, shown in ((sys.prefix, "~/elelem-kernel/.venv"), (str(root), "~")):
        text = text.replace(json.dumps(path)[1:-1], shown)
    return nbformat.from_dict(json.loads(text))


if __name__ == "__main__":
    for arg in sys.argv[1:] or sorted(NOTEBOOKS.glob("*.ipynb")):
        run(Path(arg).resolve())
