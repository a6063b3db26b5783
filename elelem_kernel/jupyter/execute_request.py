"""What the frontend's request says about the cell being run, read once per execution.

ipykernel reads an `execute_request` once at its top (`content["allow_stdin"]`,
`metadata["cellId"]`, `header["subshell_id"]`); the notebook front does the same here and
passes the answer around instead of looking into the message again. What frontends send:

| sender | `metadata` | `content.allow_stdin` |
|---|---|---|
| JupyterLab 4, Notebook 7 | `cellId` (a uuid), `deletedCells`, `recordTiming` | true |
| VS Code | `cellId`: the cell's URI, which holds the notebook's path | true |
| jupyter console, qtconsole | nothing | true |
| nbclient, papermill, `jupyter execute` | nothing | false |

Any part may be missing or of the wrong type (a client of its own, a hand-made message):
parsing never raises, and what it cannot read counts as not sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urlsplit

VSCODE_CELL = "vscode-notebook-cell:"  #: how VS Code's cell URIs start


@dataclass(frozen=True)
class ExecuteRequest:
    """One request from the frontend, as the front uses it (empty outside a kernel)."""

    #: `execute_request`, or what else made the front run (a completion making the session).
    msg_type: str = "execute_request"
    #: The cell's id: JupyterLab's and Notebook's uuid, VS Code's cell URI; None when not sent.
    cell_id: str | None = None
    #: The cell's source as sent.
    code: str | None = None
    #: Whether the frontend answers `input()`: a person is at it (a notebook, a console).
    allow_stdin: bool = False
    #: Cells deleted since the last request (JupyterLab's `deletedCells`).
    deleted_cells: tuple[str, ...] = ()
    #: The subshell the request runs on; None for the main shell.
    subshell_id: str | None = None
    #: The notebook's path when the cell id names it (VS Code), else None.
    notebook: str | None = None

    @classmethod
    def parse(cls, message: Any) -> ExecuteRequest:
        """The request of the Jupyter message `message` (a mapping; anything else reads as empty)."""
        header = _part(message, "header")
        metadata = _part(message, "metadata")
        content = _part(message, "content")
        msg_type = header.get("msg_type")
        cell_id = _text(metadata.get("cellId"))
        deleted = metadata.get("deletedCells")
        return cls(
            msg_type=msg_type if isinstance(msg_type, str) else "execute_request",
            cell_id=cell_id,
            code=content.get("code") if isinstance(content.get("code"), str) else None,
            allow_stdin=bool(content.get("allow_stdin")),  # truthy, as ipykernel takes it
            deleted_cells=tuple(str(c) for c in deleted) if isinstance(deleted, list) else (),
            subshell_id=_text(header.get("subshell_id")),
            notebook=vscode_notebook(cell_id),
        )

    def for_cell(self, cell_id: str) -> ExecuteRequest:
        """This request as if it came from the cell `cell_id` (the Undo button names its turn's)."""
        return replace(self, cell_id=cell_id, notebook=vscode_notebook(cell_id))


def vscode_notebook(cell_id: str | None) -> str | None:
    """The notebook's path in a VS Code cell id, as VS Code tells Python kernels.

    VS Code sets `__vsc_ipynb_file__` only in kernels whose language is Python; every
    execute request it sends carries `cellId`, the cell's URI, which holds the notebook's
    path: `vscode-notebook-cell:/home/me/my%20nb.ipynb#W2sZmlsZQ%3D%3D` (Windows:
    `vscode-notebook-cell:/c%3A/Users/me/nb.ipynb#...`). An untitled notebook's URI has no
    absolute path and gives None, and so does anything else.
    """
    if cell_id is None or not cell_id.startswith(VSCODE_CELL):
        return None
    path = unquote(urlsplit(cell_id).path)
    if re.match(r"/[A-Za-z]:/", path):
        path = path[1:]
    if path.endswith(".ipynb") and (path.startswith("/") or re.match(r"[A-Za-z]:/", path)):
        return path
    return None


def _part(message: Any, name: str) -> dict[str, Any]:
    part = message.get(name) if isinstance(message, Mapping) else None
    return part if isinstance(part, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
