"""notebook_read and notebook_edit on real .ipynb files, validated with nbformat."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.notebook_disk import edit_notebook, edit_preview, read_notebook
from elelem_kernel.tools.workspace import Workspace
from tests.pictures import png64


def make_notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    code = nbformat.v4.new_code_cell("x = 21\nprint(x)", id="load")
    code.execution_count = 1
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="21\n"),
        nbformat.v4.new_output(
            "display_data", data={"text/plain": "<Figure>", "image/png": png64(30, 20)}
        ),
    ]
    failing = nbformat.v4.new_code_cell("1/0", id="boom")
    failing.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
        )
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="title"), code, failing]
    nbformat.write(nb, path)


@pytest.fixture
def nb_path(root: Path) -> Path:
    path = root / "analysis.ipynb"
    make_notebook(path)
    return path


def cells_of(path: Path) -> list[tuple[str, str, str]]:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return [(c.cell_type, c.get("id"), c.source) for c in nb.cells]


def test_read_gives_cells_and_output_summaries_and_images(ws: Workspace, nb_path: Path) -> None:
    got = read_notebook(ws, "analysis.ipynb")
    assert got["count"] == 3 and got["kernel"] == "python3"
    title, code, failing = got["cells"]
    assert title == {
        "index": 0,
        "id": "title",
        "type": "markdown",
        "shown_as": "the 1st cell",
        "source": "# Title",
    }
    assert code["outputs"][0] == "stdout: 21\n"
    assert code["outputs"][1] == "display: <Figure> [also [image 1]]"
    assert got["_images"] == [{"mime_type": "image/png", "data": png64(30, 20)}]
    assert "iVBOR" not in json.dumps(got["cells"])
    assert failing["outputs"][0] == (
        "ZeroDivisionError: division by zero\nZeroDivisionError: division by zero"
    )


def test_read_some_cells_by_id_or_index(ws: Workspace, nb_path: Path) -> None:
    got = read_notebook(ws, "analysis.ipynb", cells=["boom", 0, "-2"], outputs=False)
    assert [c["index"] for c in got["cells"]] == [2, 0, 1]
    assert "outputs" not in got["cells"][2]


def test_cell_not_found(ws: Workspace, nb_path: Path) -> None:
    with pytest.raises(ToolError, match='no cell with id "nope".*title, load, boom'):
        read_notebook(ws, "analysis.ipynb", cells=["nope"])
    with pytest.raises(
        ToolError, match=r"cell index 7 is out of range: analysis.ipynb has 3 cells \(0-2\)"
    ):
        edit_notebook(ws, "analysis.ipynb", cell=7, delete=True)


def test_invalid_json_and_non_notebooks(ws: Workspace, root: Path) -> None:
    (root / "broken.ipynb").write_text('{"cells": [\n  {"cell_type": "code",\n')
    with pytest.raises(ToolError, match="not a valid notebook: invalid JSON at line 3"):
        read_notebook(ws, "broken.ipynb")
    (root / "list.ipynb").write_text("[1, 2]")
    with pytest.raises(ToolError, match='JSON but not a notebook: it has no "cells" list'):
        read_notebook(ws, "list.ipynb")
    with pytest.raises(ToolError, match='"missing.ipynb" is missing'):
        read_notebook(ws, "missing.ipynb")
    with pytest.raises(ToolError, match="not a valid notebook"):
        edit_notebook(ws, "broken.ipynb", cell=0, source="x")


def test_edit_replace_inside_a_cell(ws: Workspace, nb_path: Path) -> None:
    got = edit_notebook(ws, "analysis.ipynb", cell="load", old="x = 21", new="x = 42")
    assert got["action"] == "replace" and got["cell"] == {"index": 1, "id": "load"}
    assert "-x = 21\n+x = 42\n" in got["diff"]
    assert cells_of(nb_path)[1] == ("code", "load", "x = 42\nprint(x)")
    outputs = nbformat.read(nb_path, as_version=4).cells[1].outputs
    assert outputs[0].text == "21\n"


def test_edit_replace_missing_or_ambiguous(ws: Workspace, nb_path: Path) -> None:
    before = nb_path.read_text()
    with pytest.raises(ToolError, match="old was not found in cell 1"):
        edit_notebook(ws, "analysis.ipynb", cell=1, old="y = 3", new="z")
    with pytest.raises(ToolError, match="old appears 2 times in cell 1"):
        edit_notebook(ws, "analysis.ipynb", cell=1, old="x", new="z")
    assert nb_path.read_text() == before


def test_insert_delete_move_and_retype_keep_the_notebook_valid(
    ws: Workspace, nb_path: Path
) -> None:
    got = edit_notebook(ws, "analysis.ipynb", cell="title", insert="after", source="import os")
    new_id = got["cell"]["id"]
    assert got["cell"]["index"] == 1 and got["cells"] == 4
    assert "+# %% [code] id=" in got["diff"] and "+import os\n" in got["diff"]
    edit_notebook(ws, "analysis.ipynb", insert="after", source="## End", cell_type="markdown")
    edit_notebook(ws, "analysis.ipynb", cell="boom", delete=True)
    edit_notebook(ws, "analysis.ipynb", cell=new_id, move_to=0)
    edit_notebook(ws, "analysis.ipynb", cell="load", cell_type="raw")
    got = edit_notebook(ws, "analysis.ipynb", cell="title", source="# New title")
    assert "-# Title\n+# New title\n" in got["diff"]
    kinds = [(kind, source) for kind, _, source in cells_of(nb_path)]
    assert kinds == [
        ("code", "import os"),
        ("markdown", "# New title"),
        ("raw", "x = 21\nprint(x)"),
        ("markdown", "## End"),
    ]


def test_one_change_per_call(ws: Workspace, nb_path: Path) -> None:
    with pytest.raises(ToolError, match="one change per call, not delete and move"):
        edit_notebook(ws, "analysis.ipynb", cell=0, delete=True, move_to=1)
    with pytest.raises(ToolError, match="nothing to do"):
        edit_notebook(ws, "analysis.ipynb", cell=0)
    with pytest.raises(ToolError, match="delete needs cell"):
        edit_notebook(ws, "analysis.ipynb", delete=True)
    with pytest.raises(ToolError, match="cell_type must be one of code, markdown, raw"):
        edit_notebook(ws, "analysis.ipynb", cell=0, cell_type="sql")


def test_the_open_notebook_is_never_rewritten(ws: Workspace, nb_path: Path) -> None:
    before = nb_path.read_bytes()
    with pytest.raises(ToolError, match="open in the frontend.*propose_cell"):
        edit_notebook(ws, "analysis.ipynb", protected=nb_path, cell=0, source="changed")
    assert nb_path.read_bytes() == before
    assert "would fail" in edit_preview(ws, "analysis.ipynb", protected=nb_path, cell=0, source="x")


def test_old_notebooks_without_ids_get_them_when_edited(ws: Workspace, root: Path) -> None:
    legacy = {
        "nbformat": 4,
        "nbformat_minor": 4,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "source": "a = 1",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            }
        ],
    }
    (root / "old.ipynb").write_text(json.dumps(legacy))
    assert read_notebook(ws, "old.ipynb")["cells"][0]["id"] is None
    edit_notebook(ws, "old.ipynb", cell=0, insert="after", source="b = 2")
    saved = nbformat.read(root / "old.ipynb", as_version=4)
    nbformat.validate(saved)
    assert saved.nbformat_minor == 5 and all(c.get("id") for c in saved.cells)


def test_preview_is_the_diff_and_writes_nothing(ws: Workspace, nb_path: Path) -> None:
    before = nb_path.read_bytes()
    preview = edit_preview(ws, "analysis.ipynb", cell="load", old="21", new="22")
    assert preview.startswith("replace in analysis.ipynb") and "+x = 22" in preview
    assert nb_path.read_bytes() == before


def test_read_passes_at_most_eight_images_and_names_the_rest(ws: Workspace, root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("show()", id="many")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": png64(i + 1, 2)})
        for i in range(10)
    ]
    nb.cells = [cell]
    nbformat.write(nb, root / "many.ipynb")
    got = read_notebook(ws, "many.ipynb")
    assert len(got["_images"]) == 8 and got["_images"][7]["data"] == png64(8, 2)
    assert got["cells"][0]["outputs"][-1] == (
        "display:  [also image/png (not sent: more than 8 images)]"
    )


def test_an_html_output_whose_repr_says_nothing_reads_as_text(ws: Workspace, root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("HTML(table)", id="t")
    table = "<table><tr><th>city</th></tr><tr><td>Lagos</td></tr></table>"
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/html": table, "text/plain": "<IPython.core.display.HTML object>"},
        )
    ]
    nb.cells = [cell]
    nbformat.write(nb, root / "html.ipynb")
    [summary] = read_notebook(ws, "html.ipynb")["cells"][0]["outputs"]
    assert summary.startswith("display: city\nLagos [also text/html (")
