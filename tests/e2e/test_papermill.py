"""papermill runs notebooks with turns: the real `papermill` command, parameters included.

Each test runs `python -m papermill` in a private Jupyter world with the Elelem kernel
installed, on the demo model. The output notebook must hold each turn frozen (text and
HTML, the record in the metadata, no widgets), papermill's parameters must reach Python,
never the model, and running the output notebook again must continue the conversation
without doubling it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.e2e.browser.lab import jupyter_env

pytestmark = pytest.mark.kernel

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    import entrypoints

    engines = [e.name for e in entrypoints.get_group_all("papermill.engine")]
    assert "elelem" in engines, (
        "the installed elelem-kernel predates its papermill entry point: "
        "reinstall it (bash scripts/setup.sh test)"
    )
    return jupyter_env(tmp_path_factory.mktemp("papermill"))


def papermill(source: Path, target: Path, env: dict[str, str], *args: str) -> Any:
    """`papermill SOURCE TARGET ARGS...` as a person runs it; the output notebook."""
    done = subprocess.run(
        [sys.executable, "-m", "papermill", str(source), str(target), *args],
        env=env,
        cwd=source.parent,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return nbformat.read(target, as_version=4)


def write(path: Path, kernel: str, sources: list[str], parameters: int | None = None) -> Path:
    """A notebook for `kernel` whose cell number `parameters` is tagged "parameters"."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    if parameters is not None:
        nb.cells[parameters].metadata["tags"] = ["parameters"]
    language = "elelem" if kernel == "elelem" else "python"
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": language}
    nbformat.write(nb, path)
    return path


def turns(cell: Any) -> list[Any]:
    return [o for o in cell.get("outputs", []) if "elelem" in (o.get("metadata") or {})]


def record(cell: Any) -> dict:
    (output,) = turns(cell)
    return output.metadata["elelem"]


def check_frozen(nb: Any) -> None:
    """Every turn froze into text and HTML with its record; no widget was saved."""
    assert "widgets" not in nb.metadata
    found = [o for cell in nb.cells for o in turns(cell)]
    assert found
    for output in found:
        assert {"text/plain", "text/html"} <= set(output.data)
        assert WIDGET not in output.data
        assert output.metadata["elelem"]["stop"] == "end_turn"
        assert output.metadata["elelem"]["reply"]
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", output.get("evalue")
            assert WIDGET not in (output.get("data") or {})


def text(nb: Any) -> str:
    """Every text/plain of every output."""
    return "\n".join(
        str((o.get("data") or {}).get("text/plain", o.get("text", "")))
        for cell in nb.cells
        for o in cell.get("outputs", [])
    )


def injected(nb: Any) -> Any:
    (cell,) = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    return cell


def variables_result(turn: dict) -> str:
    (call,) = [c for r in turn["rounds"] for c in r["calls"] if c["name"] == "variables"]
    assert call["ok"], call["result"]
    return call["result"]


#: Per kernel: the cells (the "parameters" cell first), and the cell that holds the turn.
WITH_PARAMETERS = {
    "elelem": (
        ['%%py\ntopic = "fish"', "/mode auto", "which variables are in the namespace?"],
        "%%py\nprint(topic)",
    ),
    "python3": (
        ['topic = "fish"', "%load_ext elelem_kernel", "%%elelem --mode auto\nwhich variables?"],
        "print(topic)",
    ),
}


@pytest.mark.parametrize("kernel", ["elelem", "python3"])
def test_parameters_reach_python_and_the_agent_not_the_model(env, tmp_path, kernel):
    cells, check = WITH_PARAMETERS[kernel]
    source = write(tmp_path / "ask.ipynb", kernel, [*cells, check], parameters=0)
    nb = papermill(source, tmp_path / "out.ipynb", env, "-p", "topic", "birds")

    check_frozen(nb)
    cell = injected(nb)
    assert 'topic = "birds"' in cell.source
    assert cell.source.startswith("%%py\n") == (kernel == "elelem")
    assert not turns(cell), "the parameters ran as Python, not as a prompt"
    (turn,) = [record(c) for c in nb.cells if turns(c)]
    assert "'birds'" in variables_result(turn), "the agent sees them"
    assert nb.cells[-1].outputs[0]["text"].strip() == "birds"
    assert nb.metadata["papermill"]["parameters"] == {"topic": "birds"}


def test_help_notebook_lists_the_parameters_of_a_py_cell(env, tmp_path):
    source = write(
        tmp_path / "ask.ipynb", "elelem", ['%%py\ntopic = "fish"  # what to ask about', "hi"], 0
    )
    done = subprocess.run(
        [sys.executable, "-m", "papermill", "--help-notebook", str(source)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "topic" in done.stdout and "what to ask about" in done.stdout


@pytest.mark.parametrize("kernel", ["elelem", "python3"])
def test_running_the_output_again_continues_the_conversation(env, tmp_path, kernel):
    magic = "" if kernel == "elelem" else "%%elelem\n"
    first = [f"{magic}Remember the word PELICAN.", f"{magic}Second question."]
    # a slash command first, as headless notebooks often start (`/mode auto`)
    setup = (
        ["/mode plan"] if kernel == "elelem" else ["%load_ext elelem_kernel", "%elelem /mode plan"]
    )
    out = papermill(write(tmp_path / "a.ipynb", kernel, setup + first), tmp_path / "b.ipynb", env)

    assert "no notebook file known" in text(out), "papermill does not tell the kernel"

    out.cells.append(nbformat.v4.new_code_cell(f"{magic}Which word?"))
    nbformat.write(out, tmp_path / "b.ipynb")
    told = {**env, "ELELEM_NOTEBOOK": str(tmp_path / "b.ipynb")}  # as the README says
    again = papermill(tmp_path / "b.ipynb", tmp_path / "c.ipynb", told)

    check_frozen(again)
    last = record(again.cells[-1])
    assert "This is turn 3 of our conversation" in last["reply"], "not doubled, not lost"
    assert "Remember the word PELICAN." in last["reply"]
    assert "no notebook file known" not in text(again)
    assert "is not known here" not in text(again), "the workspace is the notebook's folder"


def test_the_elelem_engine_runs_as_papermills_default(env, tmp_path):
    """The engine entry point exists so papermill loads the translator; it must also run."""
    source = write(tmp_path / "ask.ipynb", "elelem", ["hello there"])
    nb = papermill(source, tmp_path / "out.ipynb", env, "--engine", "elelem")
    check_frozen(nb)
    assert record(nb.cells[0])["prompt"] == "hello there"
