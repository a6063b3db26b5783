"""notebook_run with real nbclient kernels (two kernel starts in all)."""

from __future__ import annotations

import asyncio
import base64
import os
import tracemalloc
from pathlib import Path

import nbformat
import pytest

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.notebook_run import run_notebook
from elelem_kernel.tools.workspace import Workspace
from tests.pictures import png, png64
from tests.tools.test_shell import alive

pytestmark = pytest.mark.kernel


def write_notebook(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Run me", id="intro")]
    nb.cells += [nbformat.v4.new_code_cell(s, id=f"c{i}") for i, s in enumerate(sources)]
    nbformat.write(nb, path)


def test_runs_cells_in_order_and_stops_at_the_first_error(ws: Workspace, root: Path) -> None:
    (root / "data.txt").write_text("from the notebook's folder")
    write_notebook(
        root / "run.ipynb",
        "x = 21\nprint(open('data.txt').read())",
        "x * 2",
        "undefined_name",
        "print('never')",
    )
    before = (root / "run.ipynb").read_bytes()
    got = asyncio.run(run_notebook(ws, "run.ipynb", timeout=60))
    assert got["ran"] == 3 and got["not_run"] == [4]
    first, second, third = got["cells"]
    assert first["outputs"] == ["stdout: from the notebook's folder\n"]
    assert second["outputs"] == ["Out[2]: 42"] and second["id"] == "c1"
    assert third["outputs"][0].startswith("NameError: name 'undefined_name' is not defined")
    assert got["error"].startswith("cell 3 (id c2) raised NameError")
    assert (root / "run.ipynb").read_bytes() == before
    with pytest.raises(ToolError, match="no code cells to run"):
        asyncio.run(run_notebook(ws, "run.ipynb", cells=["intro"]))
    with pytest.raises(ToolError, match='no cell with id "zz"'):
        asyncio.run(run_notebook(ws, "run.ipynb", cells=["zz"]))


def test_cancelling_shuts_the_kernel_down(ws: Workspace, root: Path) -> None:
    marker = root / "kernel.pid"
    write_notebook(
        root / "slow.ipynb",
        f"import os, time\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\ntime.sleep(1000)",
    )

    async def scenario() -> int:
        task = asyncio.ensure_future(run_notebook(ws, "slow.ipynb", timeout=600))
        for _ in range(3000):
            if marker.exists() and marker.read_text():
                break
            await asyncio.sleep(0.01)
        pid = int(marker.read_text())
        assert alive(pid)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pid

    pid = asyncio.run(scenario())
    assert not alive(pid), f"kernel {pid} still runs"
    assert os.getpid() != pid


def test_a_cell_printing_a_lot_is_cut_while_it_runs(ws: Workspace, root: Path) -> None:
    write_notebook(
        root / "loud.ipynb",
        # 50 MB in flushed 1 MB pieces, so each message is small and only keeping is costly
        "import sys\nfor i in range(50):\n"
        "    print(f'{i:02d}' + ('x' * 98 + '\\n') * 10_000, end='', flush=True)\n"
        "print('the end')",
        "for i in range(300):\n    display(i)",
        "'small'",
        "display({'image/svg+xml': 'QUJD' * 25_000, 'text/plain': 'a picture'}, raw=True)",
    )
    import nbclient  # noqa: F401  (imported before measuring: only outputs count)

    tracemalloc.start()
    try:
        got = asyncio.run(run_notebook(ws, "loud.ipynb", timeout=300))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got["ran"] == 4 and "error" not in got
    loud, many, small, picture = got["cells"]
    text = loud["outputs"][0]
    assert text.startswith("stdout: 00xxx") and text.endswith("xxx\nthe end\n")
    assert "characters cut from the middle" in text and len(text) <= 2_100
    printed = 50 * (2 + 99 * 10_000) + len("the end\n")
    assert f"stdout: {printed:,} characters printed" in loud["truncated"]
    assert len(many["outputs"]) < 40 and many["outputs"][0] == "display: 0"
    assert many["outputs"][-1] == "display: 299"
    assert "outputs left out" in many["truncated"]
    assert small["outputs"] == ["Out[3]: 'small'"] and "truncated" not in small
    assert picture["outputs"] == ["display: a picture [also image/svg+xml (100.0 KB)]"]
    assert picture["truncated"] == "1 output value cut to 20,000 characters"
    assert peak < 20_000_000, f"{peak:,} bytes at the peak: the output was kept"


def test_a_plot_and_displayed_images_come_back_as_images(ws: Workspace, root: Path) -> None:
    pytest.importorskip("matplotlib")
    write_notebook(
        root / "plot.ipynb",
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('odd')",
        "from IPython.display import Image, display\n"
        f"display(Image(data={png(5, 4)!r}))\n"
        "display({'image/png': 'QUJD' * 1_100_000, 'text/plain': 'too big'}, raw=True)",
    )
    got = asyncio.run(run_notebook(ws, "plot.ipynb", timeout=120))
    plot, shown = got["cells"]
    assert any(o.endswith("[also [image 1]]") for o in plot["outputs"])
    assert shown["outputs"][0].endswith("[also [image 2]]")
    assert shown["outputs"][1].startswith("display: too big [also image/png (4.4 MB)]")
    first, second = got["_images"]
    assert base64.b64decode(first["data"]).startswith(b"\x89PNG")
    assert second == {"mime_type": "image/png", "data": png64(5, 4)}
