"""JSON as it crosses a provider's wire: typed readers of what a server streams back, and
the types every provider shares for it.

A request body is built from TypedDicts per wire format (in each provider's module);
what no format pins down (a tool's JSON Schema, a call's arguments, sampling's `extra`,
an opaque item echoed back) is passed on as the `Mapping[str, object]` it came as. What
a server streams is unchecked: each event is an `Event`, read with the helpers below,
which narrow a field to the type the caller needs and give a neutral value (no text, no
object, no list, no count) for anything else, so a malformed event is skipped or named,
never a TypeError deep in a parser.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias, TypedDict

#: One event (an SSE `data`, an NDJSON line) as parsed, not yet checked.
Event: TypeAlias = Mapping[str, object]
#: The tool declarations a provider is handed, in OpenAI's function format.
Tools: TypeAlias = Sequence[Mapping[str, object]]


#: The scanner of json's decoder (the C one): one value at a position, without the steps
#: `json.loads` takes around it (an attribute set in `__init__`, unknown to the stubs).
_SCAN: Callable[[str, int], tuple[object, int]] = vars(json.JSONDecoder())["scan_once"]


def loads(data: str) -> object:
    """`json.loads(data)`, in one step for the usual event (a value filling the text); any
    other text (whitespace around it, something after it, no JSON) goes to `json.loads`,
    which decides and names what is wrong. A reply is thousands of events: the checks
    `json.loads` makes around its scanner cost a third of its time on each."""
    try:
        value, end = _SCAN(data, 0)
    except StopIteration:
        return json.loads(data)
    return value if end == len(data) else json.loads(data)


def mapping(value: object) -> Mapping[str, object]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def items(value: object) -> list[object]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def text(value: object) -> str:
    """`value` when it is a string, else the empty string."""
    return value if isinstance(value, str) else ""


def count(value: object) -> int | None:
    """`value` as a whole number (a float such as 12.0 too), else None; whether it is a
    sane token count is the session's to judge (`agent/usage.py`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


def counted(value: object) -> int | None:
    """A count where a server's missing (or empty) value means 0; None when it is there
    but not a number."""
    return count(value) if value else 0


class Function(TypedDict):
    """A declared tool, read from its OpenAI function format."""

    name: str
    description: str
    #: Its arguments' JSON Schema, as declared (None when it declares none).
    parameters: Mapping[str, object] | None


def function(tool: Mapping[str, object]) -> Function:
    """The name, description and parameters of a tool declaration (`{"type": "function",
    "function": {...}}`, or the function itself)."""
    fn = mapping(tool.get("function", tool))
    parameters = fn.get("parameters")
    return {
        "name": text(fn.get("name")),
        "description": text(fn.get("description")),
        "parameters": parameters if isinstance(parameters, dict) and parameters else None,
    }
