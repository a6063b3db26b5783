"""notebook_run: execute a notebook (or some of its cells) headless with nbclient.

Outputs are bounded while the cells run (`cell_outputs`): a cell that prints gigabytes
keeps the ends of its streams and the first and last of its outputs, and its entry in the
result says what was left out.

The run happens in a fresh kernel on a thread with its own event loop (`sync.on_own_loop`):
nbclient installs SIGINT/SIGTERM handlers on the loop it runs in, which must not be the
Jupyter kernel's own.
Cancelling the tool cancels the run, and nbclient shuts the kernel down. The file on disk
is left as it was; the outputs come back as text summaries.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.errors import ToolError
from elelem_kernel.images import ImageEntry
from elelem_kernel.sync import on_own_loop
from elelem_kernel.tools.bounds import MAX_BYTES
from elelem_kernel.tools.cell_outputs import CellCuts, bounded_client
from elelem_kernel.tools.declaration import Result
from elelem_kernel.tools.notebook_disk import describe_cell, find_cell, load
from elelem_kernel.tools.workspace import Workspace

if TYPE_CHECKING:
    from nbformat import NotebookNode

DEFAULT_TIMEOUT = 120
IOPUB_TIMEOUT = 30


async def run_notebook(
    ws: Workspace,
    path: str,
    cells: list[int | str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    kernel: str | None = None,
) -> Result:
    """Run the code cells (all, or those given, in notebook order); stop at the first error."""
    target, nb = load(ws, path)
    rel = ws.relative(target)
    chosen = sorted({find_cell(nb, c, rel) for c in cells}) if cells else range(len(nb.cells))
    indexes = [i for i in chosen if nb.cells[i].cell_type == "code"]
    if not indexes:
        raise ToolError(
            f"no code cells to run in {rel}" + (f" among cells {cells}" if cells else "")
        )
    name = kernel or nb.metadata.get("kernelspec", {}).get("name") or "python3"
    cuts: dict[int, CellCuts] = {}
    outcome = await on_own_loop(
        _execute(nb, indexes, target.parent, timeout, name, cuts), name="elelem-notebook-run"
    )
    ran, failed, problem = outcome
    results, size = [], 0
    pictures: list[ImageEntry] = []
    for i in ran:
        entry = describe_cell(nb.cells[i], i, images=pictures)
        entry.pop("source", None)
        note = cuts[i].note() if i in cuts else None
        if note:
            entry["truncated"] = note
        size += len(str(entry))
        results.append(
            entry if size <= MAX_BYTES else {"index": i, "outputs": ["[cut: output budget spent]"]}
        )
    result: Result = {"path": rel, "kernel": name, "ran": len(ran), "cells": results}
    if pictures:
        result["_images"] = pictures
    not_run = indexes[len(ran) :]
    if not_run:
        result["not_run"] = not_run
    if problem:
        result["error"] = problem
    elif failed is not None:
        cell = nb.cells[failed]
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        what = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else "an error"
        result["error"] = (
            f"cell {failed} (id {cell.get('id')}) raised {what}; later cells were not run"
        )
    return result


async def _execute(
    nb: NotebookNode,
    indexes: list[int],
    folder: Path,
    timeout: float,
    kernel: str,
    cuts: dict[int, CellCuts],
) -> tuple[list[int], int | None, str | None]:
    """Run the cells; return (cells run, the failing cell, a problem that stopped the run)."""
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    client = bounded_client(
        nb,
        cuts,
        timeout=timeout,
        # after a cell's reply, how long to wait for its last outputs: nbclient's 4 s
        # drops them on a loaded machine, and the wait ends as soon as they are in
        iopub_timeout=IOPUB_TIMEOUT,
        kernel_name=kernel,
        allow_errors=False,
        resources={"metadata": {"path": str(folder)}},
    )
    ran: list[int] = []
    try:
        async with client.async_setup_kernel():
            for i in indexes:
                ran.append(i)
                try:
                    await client.async_execute_cell(nb.cells[i], i)
                except CellTimeoutError:
                    return ran, i, f"cell {i} timed out after {timeout:g} s; pass a larger timeout"
                except CellExecutionError:
                    return ran, i, None
                except DeadKernelError as e:
                    return ran, i, f"the kernel died while running cell {i}: {e}"
    except NoSuchKernel:
        from jupyter_client.kernelspec import KernelSpecManager

        names = ", ".join(sorted(KernelSpecManager().find_kernel_specs()))
        raise ToolError(f'kernel "{kernel}" is not installed; installed kernels: {names}') from None
    return ran, None, None
