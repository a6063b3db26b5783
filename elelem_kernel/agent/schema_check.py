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
from collections.abc import Callable
from typing import Any

#: Keywords that say nothing about validity.
ANNOTATIONS = frozenset(
    (
        *("$schema", "$id", "$defs", "definitions", "$comment", "title", "description"),
        *("default", "examples"),
    )
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
        # nbformat's notebook schema (jupyter/notebook_json.py) uses these too
        "additionalProperties",
        "patternProperties",
        "oneOf",
        "not",
        "uniqueItems",
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

Check = Callable[[Any], bool]


def fits(schema: Any, value: Any) -> bool:
    """True when `value` surely fits `schema`; False when it does not or we cannot tell."""
    return checker(schema)(value)


def checker(schema: Any) -> Check:
    """`fits` for one schema, compiled once into closures: for values checked by the
    thousand (the records of a notebook). The schema must not change afterwards."""
    return _compile(schema, schema if isinstance(schema, dict) else {}, {})


def _never(value: Any) -> bool:
    return False


def _always(value: Any) -> bool:
    return True


def _compile(schema: Any, root: dict[str, Any], refs: dict[str, Check]) -> Check:
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
        check: Check | None = None
        if key == "additionalProperties":
            check = _additional(schema, root, refs)
        elif key in CHECKED:
            check = _keyword(key, rule, root, refs)
        if check is None:
            return _never
        checks.append(check)
    if len(checks) == 1:
        return checks[0]

    def all_of(value: Any) -> bool:
        for check in checks:
            if not check(value):
                return False
        return True

    return all_of


def _conditional(
    schema: dict[str, Any], root: dict[str, Any], refs: dict[str, Check]
) -> Check | None:
    """`if` / `then` / `else`; None when the condition is not one we understand (a condition
    we cannot check must not pick a branch)."""
    condition = _compile(schema["if"], root, refs)
    if condition is _never:
        return None
    then = _compile(schema.get("then", True), root, refs)
    otherwise = _compile(schema.get("else", True), root, refs)
    return lambda value: then(value) if condition(value) else otherwise(value)


def _keyword(key: str, rule: Any, root: dict[str, Any], refs: dict[str, Check]) -> Check | None:
    """The check of one keyword, or None when its rule is not one we understand."""
    if key == "type":
        names = rule if isinstance(rule, list) else [rule]
        if not all(isinstance(n, str) and n in _TYPES for n in names):
            return None
        types = frozenset(t for n in names for t in _TYPES[n])
        return lambda value: type(value) in types
    if key == "properties":
        return _properties(rule, root, refs) if isinstance(rule, dict) else None
    if key == "required":
        if not isinstance(rule, list):
            return None
        wanted = tuple(rule)
        return lambda value: type(value) is not dict or all(n in value for n in wanted)
    if key == "items":
        item = _compile(rule, root, refs)
        return lambda value: type(value) is not list or all(item(v) for v in value)
    if key in ("enum", "const"):
        options = rule if key == "enum" else [rule]
        if not isinstance(options, list):
            return None
        return lambda value: any(_same(value, o) for o in options)
    if key == "pattern":
        try:
            search = re.compile(rule).search  # as jsonschema matches patterns
        except (re.error, TypeError):
            return None
        return lambda value: type(value) is not str or search(value) is not None
    if key == "anyOf":
        if not isinstance(rule, list):
            return None
        options_ = [_compile(option, root, refs) for option in rule]
        return lambda value: any(option(value) for option in options_)
    if key == "$ref":
        return _ref(rule, root, refs)
    if key in ("patternProperties", "oneOf", "not", "uniqueItems"):
        return _combined(key, rule, root, refs)
    return _bound(key, rule)


def _combined(key: str, rule: Any, root: dict[str, Any], refs: dict[str, Check]) -> Check | None:
    """`patternProperties`, `oneOf`, `not` and `uniqueItems`. `oneOf` and `not` need to
    know that a value surely does not fit a schema: `_refuter` tells."""
    if key == "patternProperties":
        if not isinstance(rule, dict):
            return None
        try:
            pairs = [(re.compile(p).search, _compile(s, root, refs)) for p, s in rule.items()]
        except (re.error, TypeError):
            return None

        def patterns(value: Any) -> bool:
            if type(value) is not dict:
                return True
            for name, item in value.items():
                for search, check in pairs:
                    if search(name) is not None and not check(item):
                        return False
            return True

        return patterns
    if key == "not":
        refute = _refuter(rule, root)
        return lambda value: refute(value)
    if key == "uniqueItems":
        if rule is False:
            return _always
        # only strings are compared here (JSON equality of 1 and 1.0 is jsonschema's call)
        return lambda value: (
            type(value) is not list
            or (all(type(v) is str for v in value) and len(set(value)) == len(value))
        )
    if not isinstance(rule, list):
        return None
    branches = [(_compile(o, root, refs), _refuter(o, root)) for o in rule]

    def one_of(value: Any) -> bool:
        fitting = [i for i, (check, _) in enumerate(branches) if check(value)]
        if len(fitting) != 1:
            return False
        return all(refute(value) for i, (_, refute) in enumerate(branches) if i != fitting[0])

    return one_of


def _additional(schema: dict[str, Any], root: dict[str, Any], refs: dict[str, Check]) -> Check:
    """`additionalProperties`: properties neither named nor matched by a pattern fit it."""
    rule = schema["additionalProperties"]
    if rule is True:
        return _always
    named = set(schema.get("properties") or {})
    try:
        searches = [re.compile(p).search for p in schema.get("patternProperties") or {}]
    except (re.error, TypeError):
        return _never
    extra = _compile(rule, root, refs)  # False: no other property may be there

    def additional(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for name, item in value.items():
            if name in named or any(search(name) is not None for search in searches):
                continue
            if not extra(item):
                return False
        return True

    return additional


#: The JSON types a Python value of `json.loads` is (an integral float is an integer too).
def _json_types(value: Any) -> frozenset[str]:
    if type(value) is float:
        return frozenset(("number", "integer")) if value.is_integer() else frozenset(("number",))
    return frozenset(name for name, types in _TYPES.items() if type(value) in types)


def _refuter(schema: Any, root: dict[str, Any], depth: int = 0) -> Check:
    """True only when `value` surely does not fit `schema`: by its `type`, `required`,
    `properties` or an `enum`/`const` of strings (False: it may fit)."""
    if not isinstance(schema, dict) or depth > 16:
        return _never
    refuters: list[Check] = []
    if isinstance(schema.get("$ref"), str):
        target = _resolve(schema["$ref"], root)
        if target is not None:
            refuters.append(_refuter(target, root, depth + 1))
    names = schema.get("type")
    names = names if isinstance(names, list) else [names] if isinstance(names, str) else None
    if names is not None:
        wanted = frozenset(names)
        refuters.append(lambda value: not (_json_types(value) & wanted))
    if isinstance(schema.get("required"), list):
        required = tuple(schema["required"])
        refuters.append(lambda value: type(value) is dict and any(n not in value for n in required))
    if isinstance(schema.get("properties"), dict):
        props = [(n, _refuter(s, root, depth + 1)) for n, s in schema["properties"].items()]
        refuters.append(
            lambda value: (
                type(value) is dict and any(n in value and refute(value[n]) for n, refute in props)
            )
        )
    options = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else 0
    if isinstance(options, list) and options and all(type(o) is str for o in options):
        strings = frozenset(options)
        refuters.append(lambda value: type(value) is not str or value not in strings)
    return lambda value: any(refute(value) for refute in refuters)


def _properties(rule: dict[str, Any], root: dict[str, Any], refs: dict[str, Check]) -> Check:
    """`properties`: each named property that is present fits its schema."""
    props = [(name, _compile(sub, root, refs)) for name, sub in rule.items()]

    def properties(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for name, check in props:
            if name in value and not check(value[name]):
                return False
        return True

    return properties


def _bound(key: str, rule: Any) -> Check | None:
    """`minimum`, `maximum`, `minLength`, `maxLength`; None for any other keyword or a
    rule that is not a number (a whole number for lengths)."""
    if key in ("minimum", "maximum"):
        if type(rule) not in _NUMBERS:
            return None
        if key == "minimum":
            return lambda value: type(value) not in _NUMBERS or value >= rule
        return lambda value: type(value) not in _NUMBERS or value <= rule
    if key in ("minLength", "maxLength"):
        if type(rule) is not int:
            return None
        if key == "minLength":
            return lambda value: type(value) is not str or len(value) >= rule
        return lambda value: type(value) is not str or len(value) <= rule
    return None


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    """The schema a local reference (`#/$defs/name`, `#/definitions/a/b`) points at, or None."""
    if not ref.startswith(("#/$defs/", "#/definitions/")):
        return None
    target: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            return None
        target = target[part]
    return target


def _ref(ref: Any, root: dict[str, Any], refs: dict[str, Check]) -> Check | None:
    """The check of a local reference (compiled once, recursion allowed)."""
    if not isinstance(ref, str):
        return None
    target = _resolve(ref, root)
    if target is None:
        return None
    if ref not in refs:
        slot: list[Check] = []
        refs[ref] = lambda value: slot[0](value)  # a recursive reference sees the slot
        slot.append(_compile(target, root, refs))
        refs[ref] = slot[0]
    return refs[ref]


def _same(value: Any, option: Any) -> bool:
    """JSON equality for scalars (True is not 1); containers are left to jsonschema."""
    scalar = (str, int, float, bool, type(None))
    return isinstance(value, scalar) and type(value) is type(option) and value == option
