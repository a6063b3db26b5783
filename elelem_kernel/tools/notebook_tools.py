"""The notebook tools: notebook_read, notebook_edit, notebook_run and propose_cell.

Each acts on the notebook open in the frontend through its live link (`notebook_live`) when
no path is given or the path names that notebook, and on a notebook file otherwise
(`notebooks`, `notebook_run`): one declaration, two implementations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.errors import ToolError
from elelem_kernel.tools import changes, notebook_disk, protected
from elelem_kernel.tools.declaration import (
    CELL,
    PATH,
    STRING,
    Arguments,
    Prepared,
    Result,
    Tool,
    ToolContext,
)
from elelem_kernel.tools.workspace import Workspace

if TYPE_CHECKING:
    from elelem_kernel.tools.notebook_live import Link

#: The `path` argument of the notebook tools.
NOTEBOOK = {**PATH, "description": "a notebook file; omit for the open notebook"}

EDIT_PARAMS: dict[str, dict[str, object]] = {
    "path": NOTEBOOK,
    "cell": {**CELL, "description": "the cell's id, or its 0-based index"},
    "old": {"type": "string", "description": "exact text in the cell to replace"},
    "new": {"type": "string", "description": "replacement for old"},
    "source": {"type": "string", "description": "whole new source (or the inserted cell's)"},
    "insert": {"enum": ["before", "after"], "description": "insert a new cell near cell"},
    "cell_type": {"enum": list(notebook_disk.CELL_TYPES)},
    "delete": {"type": "boolean"},
    "move_to": {"type": "integer", "description": "new index for the cell"},
}


def live(context: ToolContext, path: str | None) -> Link | None:
    """The link to the open notebook when `path` means it (omitted, or its own path);
    None for another notebook's file. No path and no link: `ToolError`."""
    link = context.live_notebook
    if not path:
        if link is None:
            from elelem_kernel.tools.notebook_live import NOT_REACHABLE  # only in a front

            raise ToolError(NOT_REACHABLE)
        return link
    if link is not None and _is_open(context, path):
        return link
    return None


def _is_open(context: ToolContext, path: str) -> bool:
    """Whether `path` is the notebook open in the frontend."""
    opened = context.open_notebook
    if opened is None:
        return False
    return Workspace(context.workspace).resolve(path) == Path(opened).resolve()


def _edits_asked(context: ToolContext) -> bool:
    """Whether a live edit shows as a diff the person decides on (not auto mode and no
    standing yes); the diff in the cell is then the approval."""
    return not context.unasked("notebook_edit")


def _run_preview(args: Arguments) -> str:
    # notebook_run (and cell_outputs) only once a run is asked: not on a turn's path
    from elelem_kernel.tools import notebook_run

    return (
        f"run {args.get('path') or 'cells of the open notebook'}"
        + (f" cells {json.dumps(args['cells'])}" if args.get("cells") else "")
        + (" in a new kernel" if args.get("path") else " in your kernel's namespace")
        + f" ({args.get('timeout', notebook_run.DEFAULT_TIMEOUT):g} s per cell)"
    )


def definitions(context: ToolContext) -> tuple[Tool, ...]:
    """notebook_read, notebook_edit, notebook_run and propose_cell for `context`."""
    return (_read(context), _edit(context), _run(context), _propose(context))


def _read(context: ToolContext) -> Tool:
    async def notebook_read(args: Arguments) -> Result:
        link = live(context, args.get("path"))
        if link is not None:
            from elelem_kernel.tools import notebook_live  # only with an open notebook

            return await notebook_live.read_open(link, args.get("cells"), args.get("outputs", True))
        ws = Workspace(context.workspace)
        result = notebook_disk.read_notebook(
            ws, args["path"], args.get("cells"), args.get("outputs", True)
        )
        if _is_open(context, args["path"]):
            result["note"] = (
                "this notebook is open in the frontend; this is the saved file, which may lag "
                "behind unsaved edits"
            )
        return result

    return Tool(
        "notebook_read",
        "Read a notebook's cells: index, id, type, source and short output summaries "
        "(output images, up to 8, reach you as images). cells picks some by id or index. "
        "Without path: the notebook open in Jupyter as the person sees it now (unsaved "
        "edits and outputs included), where the environment says it is reachable.",
        {
            "path": NOTEBOOK,
            "cells": {"type": "array", "items": CELL},
            "outputs": {"type": "boolean", "description": "include outputs (default true)"},
        },
        notebook_read,
    )


def _edit(context: ToolContext) -> Tool:
    def ws() -> Workspace:
        return Workspace(context.workspace)

    async def notebook_edit(args: Arguments) -> Result:
        change = {k: v for k, v in args.items() if k != "path"}
        link = live(context, args.get("path"))
        if link is not None:
            from elelem_kernel.tools import notebook_live  # only with an open notebook

            asked = _edits_asked(context)
            result = await notebook_live.edit_open(link, asked, context.turn_id, **change)
            undo = result.pop("_undo", None)
            if undo is not None:
                changes.remember(context.turn_extras, undo)
            return result
        return changes.kept(
            context,
            "notebook_edit",
            args["path"],
            lambda: notebook_disk.edit_notebook(
                ws(), args["path"], context.open_notebook, **change
            ),
        )

    return Tool(
        "notebook_edit",
        "Change one cell of a notebook file per call: old+new (exact text), source (whole "
        "cell), insert before/after (with source and cell_type), delete, move_to, or "
        "cell_type. Returns a diff. Without path: the notebook open in Jupyter, where the "
        "person sees each edit as a diff in the cell and accepts or rejects it.",
        EDIT_PARAMS,
        notebook_edit,
        kind="write",
        preview=lambda a: notebook_disk.edit_preview(ws(), protected=context.open_notebook, **a),
        sensitive=lambda a: protected.startup_code(ws(), a["path"]) if a.get("path") else None,
        asks_itself=lambda a: not a.get("path") or live(context, a["path"]) is not None,
    )


def _run(context: ToolContext) -> Tool:
    async def run(args: Arguments) -> Result:
        # notebook_run (and cell_outputs) only once a run is asked: not on a turn's path
        from elelem_kernel.tools import notebook_run

        timeout = args.get("timeout", notebook_run.DEFAULT_TIMEOUT)
        link = live(context, args.get("path"))
        if link is not None:
            from elelem_kernel.tools import notebook_live  # only with an open notebook

            return await notebook_live.run_open(link, context.namespace, args.get("cells"), timeout)
        ws = Workspace(context.workspace)
        return await notebook_run.run_notebook(ws, args["path"], args.get("cells"), timeout)

    async def prepare(args: Arguments) -> Prepared | None:
        """On the open notebook: its cells read before the person is asked; the preview
        shows each one's source and the run runs exactly that."""
        link = live(context, args.get("path"))
        if link is None:
            return None
        # only with an open notebook
        from elelem_kernel.tools import notebook_live, notebook_run

        timeout = args.get("timeout", notebook_run.DEFAULT_TIMEOUT)
        plan = await notebook_live.plan_open(link, args.get("cells"))

        async def run_planned() -> Result:
            return await notebook_live.run_plan(plan, link, context.namespace, timeout)

        return notebook_live.describe_plan(plan, timeout), run_planned

    return Tool(
        "notebook_run",
        "Execute a notebook's code cells (all, or those given): with path, in a fresh "
        "headless kernel (the file is not changed); without path, cells of the notebook open "
        "in Jupyter, in the person's own kernel namespace, their outputs shown in the cells. "
        "Returns each cell's outputs (images, up to 8, reach you as images) and stops at the "
        "first error. Prompt cells never run.",
        {
            "path": NOTEBOOK,
            "cells": {"type": "array", "items": CELL},
            "timeout": {"type": "number", "minimum": 1, "description": "seconds per cell"},
        },
        run,
        kind="execute",
        preview=_run_preview,
        prepare=prepare,
    )


def _propose(context: ToolContext) -> Tool:
    async def propose_cell(args: Arguments) -> Result:
        offer = context.propose_cell
        if offer is None:
            raise ToolError(
                "there is no frontend here to propose a cell to; show the code in your reply"
            )
        offer(args["source"])
        return {"proposed": True, "note": "the person sees the cell and decides whether to run it"}

    return Tool(
        "propose_cell",
        "Offer the person a new code cell below the current one (in Jupyter) or print it (on "
        "the command line). Nothing runs; they decide. Use this for the open notebook.",
        {"source": STRING},
        propose_cell,
        required=("source",),
    )
