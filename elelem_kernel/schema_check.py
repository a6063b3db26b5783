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
from collections.abc import Callable, Mapping

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
#: JSON types → the exact Python types `json.loads` gives (bool is not an integer).
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
}
_NUMBERS = (int, float)

Check = Callable[[object], bool]


def fits(schema: object, value: object) -> bool:
    """True when `value` surely fits `schema`; False when it does not or we cannot tell."""
    return checker(schema)(value)


def checker(schema: object) -> Check:
    """`fits` for one schema, compiled once into closures: for values checked by the
    thousand (the records of a notebook). The schema must not change afterwards."""
    return _compile(schema, schema if isinstance(schema, dict) else {}, {})


def _never(value: object) -> bool:
    return False


def _always(value: object) -> bool:
    return True


def _compile(schema: object, root: Mapping[str, object], refs: dict[str, Check]) -> Check:
    if schema is True or schema == {}:
        return _always
    if not isinstance(schema, dict):
        return _never
    checks = []
    if "if" in schema:
        condition = _conditional(schema, root, refs)
        if condition is None:
            return _never
        checks.append(condition)
    for key, rule in schema.items():
        if key in ANNOTATIONS or key in ("if", "then", "else"):
            continue
        check = _keyword(key, rule, root, refs) if key in CHECKED else None
        if check is None:
            return _never
        checks.append(check)
    if len(checks) == 1:
        return checks[0]

    def all_of(value: object) -> bool:
        for check in checks:
            if not check(value):
                return False
        return True

    return all_of


def _conditional(
    schema: Mapping[str, object], root: Mapping[str, object], refs: dict[str, Check]
) -> Check | None:
    """`if` / `then` / `else`; None when the condition is not one we understand (a condition
    we cannot check must not pick a branch)."""
    condition = _compile(schema["if"], root, refs)
    if condition is _never:
        return None
    then = _compile(schema.get("then", True), root, refs)
    otherwise = _compile(schema.get("else", True), root, refs)
    return lambda value: then(value) if condition(value) else otherwise(value)


def _keyword(
    key: str, rule: object, root: Mapping[str, object], refs: dict[str, Check]
) -> Check | None:
    """The check of one keyword, or None when its rule is not one we understand."""
    if key == "properties":
        return _properties(rule, root, refs) if isinstance(rule, dict) else None
    if key == "items":
        item = _compile(rule, root, refs)
        return lambda value: type(value) is not list or all(item(v) for v in value)
    if key == "anyOf":
        if not isinstance(rule, list):
            return None
        options = [_compile(option, root, refs) for option in rule]
        return lambda value: any(option(value) for option in options)
    if key == "$ref":
        return _ref(rule, root, refs)
    if key in _PLAIN:
        return _PLAIN[key](rule)
    return _bound(key, rule)


def _type(rule: object) -> Check | None:
    """`type`: one JSON type's name or a list of them."""
    given = rule if isinstance(rule, list) else [rule]
    names = [n for n in given if isinstance(n, str) and n in _TYPES]
    if len(names) != len(given):
        return None
    types = frozenset(t for n in names for t in _TYPES[n])
    return lambda value: type(value) in types


def _required(rule: object) -> Check | None:
    """`required`: the names an object must have."""
    if not isinstance(rule, list):
        return None
    wanted = tuple(rule)
    return lambda value: type(value) is not dict or all(n in value for n in wanted)


def _enum(rule: object) -> Check | None:
    """`enum`: one of a list of scalars."""
    if not isinstance(rule, list):
        return None
    return lambda value: any(_same(value, o) for o in rule)


def _const(rule: object) -> Check | None:
    """`const`: this one scalar."""
    return _enum([rule])


def _pattern(rule: object) -> Check | None:
    """`pattern`: a string the regular expression finds a match in, as jsonschema does."""
    if not isinstance(rule, str):
        return None
    try:
        search = re.compile(rule).search  # as jsonschema matches patterns
    except re.error:
        return None
    return lambda value: type(value) is not str or search(value) is not None


#: The keywords whose check depends on their rule alone.
_PLAIN: dict[str, Callable[[object], Check | None]] = {
    "type": _type,
    "required": _required,
    "enum": _enum,
    "const": _const,
    "pattern": _pattern,
}


def _properties(
    rule: Mapping[str, object], root: Mapping[str, object], refs: dict[str, Check]
) -> Check:
    """`properties`: each named property that is present fits its schema."""
    props = [(name, _compile(sub, root, refs)) for name, sub in rule.items()]

    def properties(value: object) -> bool:
        if type(value) is not dict:
            return True
        for name, check in props:
            if name in value and not check(value[name]):
                return False
        return True

    return properties


def _bound(key: str, rule: object) -> Check | None:
    """`minimum`, `maximum`, `minLength`, `maxLength`; None for any other keyword or a
    rule that is not a number (a whole number for lengths)."""
    if key in ("minimum", "maximum"):
        if type(rule) not in _NUMBERS or not isinstance(rule, (int, float)):
            return None
        bound = rule
        if key == "minimum":
            return lambda value: type(value) not in _NUMBERS or _number(value) >= bound
        return lambda value: type(value) not in _NUMBERS or _number(value) <= bound
    if key in ("minLength", "maxLength"):
        if type(rule) is not int or not isinstance(rule, int):
            return None
        length = rule
        if key == "minLength":
            return lambda value: type(value) is not str or len(str(value)) >= length
        return lambda value: type(value) is not str or len(str(value)) <= length
    return None


def _number(value: object) -> float:
    """A value `type` already showed to be an int or a float, as one."""
    return value if isinstance(value, (int, float)) else 0.0


def _ref(ref: object, root: Mapping[str, object], refs: dict[str, Check]) -> Check | None:
    """The check of a local `#/$defs/name` reference (compiled once, recursion allowed)."""
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return None
    defs = root.get("$defs")
    target = defs.get(ref[len("#/$defs/") :]) if isinstance(defs, dict) else None
    if target is None:
        return None
    if ref not in refs:
        slot: list[Check] = []
        refs[ref] = lambda value: slot[0](value)  # a recursive reference sees the slot
        slot.append(_compile(target, root, refs))
        refs[ref] = slot[0]
    return refs[ref]


def _same(value: object, option: object) -> bool:
    """JSON equality for scalars (True is not 1); containers are left to jsonschema."""
    scalar = (str, int, float, bool, type(None))
    return isinstance(value, scalar) and type(value) is type(option) and value == option
