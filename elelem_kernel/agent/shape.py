"""A quick yes to "does this value fit this JSON Schema?", for the schemas we write.

Importing jsonschema costs 0.3-1 s (with Jupyter installed it compiles format-checker
grammars), more than a whole `ask` turn. Tool arguments and turn records almost always
fit, so `fits` checks the few keywords our schemas use and answers True only when the
value surely fits; False means "ask jsonschema", which then gives the verdict and the
message. Keywords outside the allowlist below always answer False, so a schema using
them is still checked in full.
"""

from __future__ import annotations

import re
from typing import Any

#: Keywords that say nothing about validity.
ANNOTATIONS = frozenset(
    ("$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples")
)
#: Keywords `fits` checks; any other keyword in a schema makes it answer False.
CHECKED = frozenset(
    (
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "$ref",
    )
)
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def fits(schema: Any, value: Any, root: dict[str, Any] | None = None) -> bool:
    """True when `value` surely fits `schema`; False when it does not or we cannot tell."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict):
        return False
    root = schema if root is None else root
    for key, rule in schema.items():
        if key in ANNOTATIONS:
            continue
        if key not in CHECKED or not _check(key, rule, schema, value, root):
            return False
    return True


def _check(key: str, rule: Any, schema: dict, value: Any, root: dict) -> bool:
    if key == "type":
        names = rule if isinstance(rule, list) else [rule]
        return any(name in _TYPES and _TYPES[name](value) for name in names)
    if key == "properties":
        if not isinstance(value, dict):
            return True
        return isinstance(rule, dict) and all(
            fits(rule[name], value[name], root) for name in rule if name in value
        )
    if key == "required":
        return not isinstance(value, dict) or all(name in value for name in rule)
    if key == "items":
        return not isinstance(value, list) or all(fits(rule, item, root) for item in value)
    if key in ("enum", "const"):
        options = rule if key == "enum" else [rule]
        return isinstance(options, list) and any(_same(value, o) for o in options)
    if key in ("minimum", "maximum"):
        if not _TYPES["number"](value):
            return True
        if not _TYPES["number"](rule):
            return False
        return value >= rule if key == "minimum" else value <= rule
    if key in ("minLength", "maxLength"):
        if not isinstance(value, str):
            return True
        return len(value) >= rule if key == "minLength" else len(value) <= rule
    if key == "pattern":
        if not isinstance(value, str):
            return True
        try:
            return re.search(rule, value) is not None  # as jsonschema matches patterns
        except (re.error, TypeError):
            return False
    if key == "anyOf":
        return isinstance(rule, list) and any(fits(option, value, root) for option in rule)
    if key == "$ref":
        return _ref(rule, root) is not None and fits(_ref(rule, root), value, root)
    return False


def _ref(ref: Any, root: dict) -> Any:
    """The schema at a local `#/$defs/name` reference, or None."""
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return None
    return (root.get("$defs") or {}).get(ref[len("#/$defs/") :])


def _same(value: Any, option: Any) -> bool:
    """JSON equality for scalars (True is not 1); containers are left to jsonschema."""
    scalar = (str, int, float, bool, type(None))
    return isinstance(value, scalar) and type(value) is type(option) and value == option
