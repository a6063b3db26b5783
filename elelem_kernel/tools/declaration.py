"""How a tool module declares its tools: `ToolDefinition`s made for a `ToolContext`.

Each module of `tools/` that implements tools exports a function `definitions(context)`
(or a few, in the order the tools are offered) returning its definitions; the
composition root (`assembly/workspace_tools.py`) puts them into a session's toolbox. A
tool that cannot do what it was asked raises `ToolError`; the toolbox turns that into a
failure result once, for every tool.

The context is read at call time: the turn's fields (its id, its record's extras, the
link to the open notebook) are the running turn's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elelem_kernel.tools.notebooks_live import Link

Arguments = dict[str, Any]
Result = dict[str, Any]
#: The preview a person approves and the run of exactly what it shows.
Prepared = tuple[str, Callable[[], Awaitable[Result]]]

#: Schema pieces the declarations share.
STRING: dict[str, Any] = {"type": "string"}
CELL: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
PATH: dict[str, Any] = {"type": "string", "description": "path relative to the workspace root"}


@dataclass
class ToolContext:
    """What the workspace tools read of the session they serve, never the session itself:
    one per session (`Session.tool_context`); each turn fills its per-turn fields and
    empties them when it ends."""

    workspace: Path
    namespace: dict[str, Any] = field(default_factory=dict)
    #: The notebook open in the front (its file is written only through the front), or None.
    open_notebook: Path | None = None
    #: How the front offers a new cell (None: there is no frontend to offer one to).
    propose_cell: Callable[[str], None] | None = None
    #: Whether a tool runs without the person's yes (the auto mode, or allowed by name).
    unasked: Callable[[str], bool] = lambda name: False
    #: The front's link to the open notebook for this turn (the notebook tools without a
    #: path act on it), or None.
    live_notebook: Link | None = None
    #: Fields the turn adds to its record; the tools keep what they changed there.
    turn_extras: dict[str, Any] = field(default_factory=dict)
    #: The running turn's id, what the tools mark their changes with.
    turn_id: str | None = None


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
