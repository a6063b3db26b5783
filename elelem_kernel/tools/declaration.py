"""How a tool is declared: the `Tool` dataclass, and the `ToolContext` the workspace
tools are made for.

Each module of `tools/` that implements tools exports a function `definitions(context)`
(or a few, in the order the tools are offered) returning its `Tool`s; the
composition root (`assembly/workspace_tools.py`) puts them into a session's toolbox. A
tool that cannot do what it was asked raises `ToolError`; the toolbox turns that into a
failure result once, for every tool.

The context is read at call time: the turn's fields (its id, its record's extras, the
link to the open notebook) are the running turn's.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from elelem_kernel.tools.extras import TurnExtras
    from elelem_kernel.tools.notebook_live import Link

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
    namespace: dict[str, object] = field(default_factory=dict)
    #: The notebook open in the frontend (its file is written only through the frontend), or None.
    open_notebook: Path | None = None
    #: How the front offers a new cell (None: there is no frontend to offer one to).
    propose_cell: Callable[[str], None] | None = None
    #: Whether a tool runs without the person's yes (the auto mode, or allowed by name).
    unasked: Callable[[str], bool] = lambda name: False
    #: The front's link to the open notebook for this turn (the notebook tools without a
    #: path act on it), or None.
    live_notebook: Link | None = None
    #: Fields the turn adds to its record; the tools keep what they changed there.
    turn_extras: TurnExtras = field(default_factory=lambda: cast("TurnExtras", {}))
    #: The running turn's id, what the tools mark their changes with.
    turn_id: str | None = None


@dataclass(frozen=True)
class Tool:
    """One tool, as every source declares it (a module of `tools/`, an MCP server, the
    review, a plugin's `toolbox.add`): its name, what the model is told, the JSON Schema
    properties of its arguments, what runs, its kind and what a person approving sees.

    Frozen: a source that changes how a tool runs makes a new one (`dataclasses.replace`,
    `agent/toolset.py`), so a tool is the same wherever it was handed.
    """

    name: str
    description: str
    params: dict[str, dict[str, Any]]
    fn: Callable[[Arguments], Any]
    required: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    kind: str = "read"
    preview: Callable[[Arguments], str] | None = None
    #: Why a call needs a person's yes every time (e.g. a write that can run code), or None.
    sensitive: Callable[[Arguments], str | None] | None = None
    #: Whether a call asks the person itself (a live notebook edit shows its diff in the
    #: cell with Accept / Reject), so the session does not ask first.
    asks_itself: Callable[[Arguments], bool] | None = None
    #: Reads what a call acts on before it is approved (the open notebook's cells), so
    #: that the preview shows it and the run uses it, not a later read; None when the
    #: call needs no such reading (then `preview` and `fn` serve).
    prepare: Callable[[Arguments], Awaitable[Prepared | None]] | None = None

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments."""
        return {
            "type": "object",
            "properties": self.params,
            "required": list(self.required),
        }

    def spec(self, brief: bool = False) -> dict[str, Any]:
        """The tool in OpenAI function format, as providers receive it; `brief` (a small
        window): its first sentence only, and no descriptions of its parameters."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": first_sentence(self.description) if brief else self.description,
                "parameters": without_descriptions(self.schema) if brief else self.schema,
            },
        }

    def describe(self, args: Arguments) -> str:
        """What the call will do, for a person deciding whether to allow it."""
        if self.preview is not None:
            try:
                return self.preview(args)
            except Exception as e:  # a broken preview must not hide the call
                return f"{self.name}({json.dumps(args, ensure_ascii=False)})  [preview failed: {e}]"
        return f"{self.name}({json.dumps(args, ensure_ascii=False, indent=2)})"

    def asks_person(self, args: Arguments) -> bool:
        """Whether this call asks the person itself (see `asks_itself`); False if unsure."""
        try:
            return bool(self.asks_itself and self.asks_itself(args))
        except Exception:
            return False

    def caution(self, args: Arguments) -> str | None:
        """Why this call must be asked every time (see `sensitive`), or None."""
        if self.sensitive is None:
            return None
        try:
            return self.sensitive(args)
        except Exception as e:  # a broken check must not let the call through unasked
            return f"could not check whether this call is safe to allow once for all: {e}"


def first_sentence(text: str) -> str:
    """The first clause of a tool's description (up to its first `.`, `;` or `:` outside
    parentheses), what a small window can afford."""
    text = " ".join(text.split())
    depth = 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth <= 0 and char in ".;:" and text[i + 1 : i + 2] in (" ", ""):
            return text[:i] + "."
    return text


def without_descriptions(schema: Any) -> Any:
    """`schema` without its `description`, `minimum` and `maximum` keywords (a property
    named so is kept; the call is still checked against the whole schema)."""
    if isinstance(schema, list):
        return [without_descriptions(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: without_descriptions(v) for name, v in value.items()}
        elif key not in ("description", "minimum", "maximum"):
            out[key] = without_descriptions(value)
    return out
