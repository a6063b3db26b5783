"""The default "workspace" setup: register every workspace tool into a session's toolbox.

The session's workspace, namespace and open notebook are read at call time, so a front
that changes them later (the notebook being opened, a kernel's `user_ns`) is honoured. A
plugin replaces or extends any of these by adding a tool under the same name.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elelem_kernel.errors import ToolError
from elelem_kernel.tools import (
    changes,
    files,
    namespace,
    notebook_run,
    notebooks,
    notebooks_live,
    protected,
    search,
    shell,
)
from elelem_kernel.tools.bounds import MAX_LINES
from elelem_kernel.tools.workspace import Workspace

_STR = {"type": "string"}
_CELL = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
_PATH = {"type": "string", "description": "path relative to the workspace root"}


def add_workspace_tools(session: Any) -> None:
    """Register read, list, grep, write, edit, bash, python, variables, notebook_* and propose_cell."""
    tools = session.toolbox

    def ws() -> Workspace:
        return Workspace(session.workspace)

    def open_notebook() -> Path | None:
        return getattr(session, "open_notebook", None)

    def live(path: str | None) -> Any:
        """The link to the open notebook when `path` means it (omitted, or its own path);
        None for another notebook's file. No path and no link: `ToolError`."""
        link = getattr(session, "live_notebook", None)
        if not path:
            if link is None:
                raise ToolError(notebooks_live.NOT_REACHABLE)
            return link
        opened = open_notebook()
        if link is not None and opened is not None and ws().resolve(path) == Path(opened).resolve():
            return link
        return None

    def kept(name: str, path: str, write: Callable[[], dict]) -> dict:
        """Run `write` on file `path`; when it succeeds, keep what the file held before in
        the turn's record (`changes`), so the turn can be undone."""
        target = ws().resolve(path)
        before = changes.file_before(target)
        result = write()
        if "error" not in result:
            entry = {"kind": "file", "action": name, "path": ws().relative(target), **before}
            entry["after_sha"] = changes.digest(target)
            changes.remember(session.turn_extras, entry)
        return result

    def edits_asked(args: dict) -> bool:
        """Whether this call's live edit shows as a diff the person decides on (build mode
        and no standing yes); the diff in the cell is then the approval."""
        allowed = getattr(session, "always", set()) | getattr(session, "allow", set())
        return getattr(session, "mode", "build") != "auto" and "notebook_edit" not in allowed

    @tools.add(
        "read",
        "Read a text file: numbered lines, 2,000 at most per call; says the total line count "
        "and how to read on (offset). A PNG, JPEG, GIF or WebP file comes back as the image. "
        "Refuses other binary files.",
        {
            "path": _PATH,
            "offset": {"type": "integer", "minimum": 1, "description": "first line (1-based)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LINES},
        },
        required=["path"],
        aliases=["open"],
    )
    @_guard
    def read(args: dict) -> dict:
        return files.read(ws(), args["path"], args.get("offset", 1), args.get("limit", MAX_LINES))

    @tools.add(
        "list",
        "List files under a folder (default: the workspace root), filtered by a glob like "
        "'*.py' or 'src/**/*.ipynb'; .gitignore is respected inside a git repository.",
        {"path": _PATH, "pattern": {"type": "string", "description": "glob, e.g. '*.csv'"}},
        aliases=["ls", "glob"],
    )
    @_guard
    def list_(args: dict) -> dict:
        return files.list_files(ws(), args.get("path"), args.get("pattern"))

    @tools.add(
        "grep",
        "Search file contents with a regular expression; prints path:line:text for every "
        "matching line (capped, with the total count).",
        {
            "pattern": {"type": "string", "description": "regular expression"},
            "path": _PATH,
            "glob": {"type": "string", "description": "only files matching this glob"},
            "ignore_case": {"type": "boolean"},
        },
        required=["pattern"],
        aliases=["search"],
    )
    @_guard
    async def grep(args: dict) -> dict:
        return await search.agrep(
            ws(),
            args["pattern"],
            args.get("path"),
            args.get("glob"),
            args.get("ignore_case", False),
        )

    @tools.add(
        "write",
        "Write a whole file (created with its folders, or replaced). To change part of a "
        "file, use edit.",
        {"path": _PATH, "content": _STR},
        required=["path", "content"],
        kind="write",
        preview=lambda a: files.write_preview(ws(), a["path"], a["content"]),
        sensitive=lambda a: protected.startup_code(ws(), a["path"]),
    )
    @_guard
    def write(args: dict) -> dict:
        return kept(
            "write",
            args["path"],
            lambda: files.write(ws(), args["path"], args["content"], open_notebook()),
        )

    @tools.add(
        "edit",
        "Replace an exact piece of text in a file with new text; old must appear exactly "
        "once unless replace_all is true. Returns the diff.",
        {"path": _PATH, "old": _STR, "new": _STR, "replace_all": {"type": "boolean"}},
        required=["path", "old", "new"],
        kind="write",
        preview=lambda a: files.edit_preview(
            ws(), a["path"], a["old"], a["new"], a.get("replace_all", False)
        ),
        sensitive=lambda a: protected.startup_code(ws(), a["path"]),
    )
    @_guard
    def edit(args: dict) -> dict:
        return kept(
            "edit",
            args["path"],
            lambda: files.edit(
                ws(),
                args["path"],
                args["old"],
                args["new"],
                args.get("replace_all", False),
                open_notebook(),
            ),
        )

    @tools.add(
        "bash",
        "Run a shell command with bash in the workspace root; returns exit code, stdout and "
        f"stderr (long output keeps its head and tail). Killed after timeout seconds "
        f"(default {shell.DEFAULT_TIMEOUT}).",
        {"command": _STR, "timeout": {"type": "number", "minimum": 1, "maximum": 3600}},
        required=["command"],
        aliases=["exec", "shell"],
        kind="execute",
        preview=lambda a: shell.preview(
            ws().root, a["command"], a.get("timeout", shell.DEFAULT_TIMEOUT)
        ),
    )
    @_guard
    async def bash(args: dict) -> dict:
        return await shell.bash(
            ws().root, args["command"], args.get("timeout", shell.DEFAULT_TIMEOUT)
        )

    @tools.add(
        "python",
        "Run Python code in the session's live namespace (variables persist and the person "
        "sees them); returns stdout, stderr, the value of a final expression, or the traceback, "
        "and what the code displayed, in order: plots (a pyplot figure left open counts) and "
        "images reach you as images, tables as text.",
        {"code": _STR},
        required=["code"],
        kind="execute",
        preview=lambda a: a["code"],
    )
    @_guard
    async def python(args: dict) -> dict:
        return await namespace.run_python_async(session.namespace, args["code"])

    @tools.add(
        "variables",
        "List the names in the live Python namespace with type and a short summary (shape "
        "and dtypes for arrays and data frames, length for containers).",
        {"pattern": {"type": "string", "description": "glob on names, e.g. 'df*'"}},
    )
    @_guard
    def variables(args: dict) -> dict:
        return namespace.list_variables(session.namespace, args.get("pattern"))

    @tools.add(
        "notebook_read",
        "Read a notebook's cells: index, id, type, source and short output summaries "
        "(output images, up to 8, reach you as images). cells picks some by id or index. "
        "Without path: the notebook open in Jupyter as the person sees it now (unsaved "
        "edits and outputs included), where the environment says it is reachable.",
        {
            "path": {**_PATH, "description": "a notebook file; omit for the open notebook"},
            "cells": {"type": "array", "items": _CELL},
            "outputs": {"type": "boolean", "description": "include outputs (default true)"},
        },
    )
    @_guard
    async def notebook_read(args: dict) -> dict:
        link = live(args.get("path"))
        if link is not None:
            return await notebooks_live.read_open(
                link, args.get("cells"), args.get("outputs", True)
            )
        result = notebooks.read_notebook(
            ws(), args["path"], args.get("cells"), args.get("outputs", True)
        )
        opened = open_notebook()
        if opened is not None and ws().resolve(args["path"]) == Path(opened).resolve():
            result["note"] = (
                "this notebook is open in the frontend; this is the saved file, which may lag "
                "behind unsaved edits"
            )
        return result

    edit_params = {
        "path": {**_PATH, "description": "a notebook file; omit for the open notebook"},
        "cell": {**_CELL, "description": "the cell's id, or its 0-based index"},
        "old": {"type": "string", "description": "exact text in the cell to replace"},
        "new": {"type": "string", "description": "replacement for old"},
        "source": {"type": "string", "description": "whole new source (or the inserted cell's)"},
        "insert": {"enum": ["before", "after"], "description": "insert a new cell near cell"},
        "cell_type": {"enum": list(notebooks.CELL_TYPES)},
        "delete": {"type": "boolean"},
        "move_to": {"type": "integer", "description": "new index for the cell"},
    }

    @tools.add(
        "notebook_edit",
        "Change one cell of a notebook file per call: old+new (exact text), source (whole "
        "cell), insert before/after (with source and cell_type), delete, move_to, or "
        "cell_type. Returns a diff. Without path: the notebook open in Jupyter, where the "
        "person sees each edit as a diff in the cell and accepts or rejects it.",
        edit_params,
        kind="write",
        preview=lambda a: notebooks.edit_preview(ws(), protected=open_notebook(), **a),
        sensitive=lambda a: protected.startup_code(ws(), a["path"]) if a.get("path") else None,
        asks_itself=lambda a: not a.get("path") or live(a["path"]) is not None,
    )
    @_guard
    async def notebook_edit(args: dict) -> dict:
        change = {k: v for k, v in args.items() if k != "path"}
        link = live(args.get("path"))
        if link is not None:
            result = await notebooks_live.edit_open(
                link, edits_asked(args), getattr(session, "turn_id", None), **change
            )
            undo = result.pop("_undo", None)
            if undo is not None:
                changes.remember(session.turn_extras, undo)
            return result
        return kept(
            "notebook_edit",
            args["path"],
            lambda: notebooks.edit_notebook(ws(), args["path"], open_notebook(), **change),
        )

    @tools.add(
        "notebook_run",
        "Execute a notebook's code cells (all, or those given): with path, in a fresh "
        "headless kernel (the file is not changed); without path, cells of the notebook open "
        "in Jupyter, in the person's own kernel namespace, their outputs shown in the cells. "
        "Returns each cell's outputs (images, up to 8, reach you as images) and stops at the "
        "first error. Prompt cells never run.",
        {
            "path": {**_PATH, "description": "a notebook file; omit for the open notebook"},
            "cells": {"type": "array", "items": _CELL},
            "timeout": {"type": "number", "minimum": 1, "description": "seconds per cell"},
        },
        kind="execute",
        preview=lambda a: (
            f"run {a.get('path') or 'cells of the open notebook'}"
            + (f" cells {json.dumps(a['cells'])}" if a.get("cells") else "")
            + (" in a new kernel" if a.get("path") else " in your kernel's namespace")
            + f" ({a.get('timeout', notebook_run.DEFAULT_TIMEOUT):g} s per cell)"
        ),
    )
    @_guard
    async def run(args: dict) -> dict:
        timeout = args.get("timeout", notebook_run.DEFAULT_TIMEOUT)
        link = live(args.get("path"))
        if link is not None:
            return await notebooks_live.run_open(
                link, session.namespace, args.get("cells"), timeout
            )
        return await notebook_run.run_notebook(ws(), args["path"], args.get("cells"), timeout)

    @tools.add(
        "propose_cell",
        "Offer the person a new code cell below the current one (in Jupyter) or print it (on "
        "the command line). Nothing runs; they decide. Use this for the open notebook.",
        {"source": _STR},
        required=["source"],
    )
    @_guard
    async def propose_cell(args: dict) -> dict:
        offer = getattr(session, "propose_cell", None)
        if not callable(offer):
            raise ToolError(
                "there is no frontend here to propose a cell to; show the code in your reply"
            )
        offer(args["source"])
        return {"proposed": True, "note": "the person sees the cell and decides whether to run it"}


def _guard(fn: Callable[[dict], Any]) -> Callable[[dict], Any]:
    """Turn a `ToolError` into a plain failure result (the message alone, for the model)."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def guarded_async(args: dict) -> Any:
            try:
                return await fn(args)
            except ToolError as e:
                return {"error": str(e)}

        return guarded_async

    @functools.wraps(fn)
    def guarded(args: dict) -> Any:
        try:
            return fn(args)
        except ToolError as e:
            return {"error": str(e)}

    return guarded
