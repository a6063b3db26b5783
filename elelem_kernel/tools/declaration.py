"""How a tool module declares its tools: `ToolDefinition`s made for a `ToolContext`.

Each module of `tools/` that implements tools exports a function `definitions(context)`
(or a few, in the order the tools are offered) returning its definitions; the
composition root (`assembly/workspace_tools.py`) puts them into a session's toolbox. A
tool that cannot do what it was asked raises `ToolError`; the toolbox turns that into a
failure result once, for every tool.

The context is read at call time, so a front that changes it later (the notebook being
opened, a kernel's `user_ns`) is honoured.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from elelem_kernel.tools.extras import TurnExtras
    from elelem_kernel.tools.notebooks_live import Link

Arguments = dict[str, Any]
Result = dict[str, Any]
#: The preview a person approves and the run of exactly what it shows.
Prepared = tuple[str, Callable[[], Awaitable[Result]]]

#: Schema pieces the declarations share.
STRING: dict[str, Any] = {"type": "string"}
CELL: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
PATH: dict[str, Any] = {"type": "string", "description": "path relative to the workspace root"}


class ToolContext(Protocol):
    """What the workspace tools read of the session they serve (a `Session` is one)."""

    workspace: Path
    namespace: dict[str, Any]
    #: The notebook open in the front (its file is written only through the front), or None.
    open_notebook: Path | None
    #: The front's link to that notebook, for the notebook tools without a path, or None.
    live_notebook: Link | None
    #: Fields the turn adds to its record; the tools keep what they changed there.
    turn_extras: TurnExtras
    turn_id: str | None
    always: set[str]
    allow: set[str]
    propose_cell: Callable[[str], None]

    @property
    def mode(self) -> str:
        """The session's mode (`agent/toolbox.MODES`)."""


@dataclass(frozen=True)
class ToolDefinition:
    """One tool as its module declares it: name, what the model is told, the JSON Schema
    properties of its arguments, what runs, its kind and what a person approving sees."""

    name: str
    description: str
    params: dict[str, dict[str, Any]]
    fn: Callable[[Arguments], Any]
    required: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    kind: str = "read"
    preview: Callable[[Arguments], str] | None = None
    #: Why a call needs a person's yes every time, or None (see `agent/toolbox.Tool`).
    sensitive: Callable[[Arguments], str | None] | None = None
    #: Whether a call asks the person itself (a live notebook edit), so nobody asks first.
    asks_itself: Callable[[Arguments], bool] | None = None
    #: Reads what a call acts on before it is approved: the preview and the run of
    #: exactly that, or None (see `agent/toolbox.Tool.prepare`).
    prepare: Callable[[Arguments], Awaitable[Prepared | None]] | None = None
