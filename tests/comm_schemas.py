"""The comms' JSON Schemas (elelem_kernel/jupyter/comm_schemas/), for tests to check
messages against.

Each schema names its comm (`title`, the comm target), who opens it (`x-opened-by`) and
three parts under `$defs`: `open` (the comm_open's data, from the side that opens it),
`from_kernel` and `from_frontend` (comm_msg data each way; a part is missing when that
side sends none). `kind` says which of a part's message kinds a message is.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

#: The comm targets, one schema each.
TARGETS = ("elelem.restore", "elelem.notebook", "elelem.undoable")
PARTS = ("open", "from_kernel", "from_frontend")


def schema(target: str) -> dict[str, Any]:
    """The schema of comm `target`, as shipped in the package."""
    folder = resources.files("elelem_kernel.jupyter").joinpath("comm_schemas")
    return json.loads(folder.joinpath(f"{target}.json").read_text("utf-8"))


@cache
def _registry() -> Any:
    from referencing import Registry, Resource

    resources_ = [Resource.from_contents(schema(t)) for t in TARGETS]
    return Registry().with_resources((r.id(), r) for r in resources_)


def validator(target: str, pointer: str) -> Any:
    """A validator for the part of `target`'s schema at `pointer` (`#/$defs/open`)."""
    from jsonschema import Draft202012Validator

    base = schema(target)["$id"]
    return Draft202012Validator({"$ref": f"{base}{pointer}"}, registry=_registry())


def sender(target: str, part: str) -> str:
    """Who sends the messages of `part` of comm `target`: "kernel" or "frontend"."""
    if part == "open":
        return str(schema(target)["x-opened-by"])
    return part.removeprefix("from_")


def errors(target: str, part: str, data: Any) -> list[str]:
    """Why `data` is not a message of `part` of comm `target` (none when it is)."""
    if part not in schema(target)["$defs"]:
        return [f"{target} has no {part} messages"]
    found = validator(target, f"#/$defs/{part}").iter_errors(data)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in found]


def check(target: str, part: str, data: Any) -> str:
    """Assert that `data` is a message of `part` of comm `target`; its kind (`kind`)."""
    problems = errors(target, part, data)
    assert not problems, f"{target} {part} message {json.dumps(data)[:2000]}: {problems}"
    return kind(target, part, data)


def members(target: str, part: str) -> list[str]:
    """The message kinds of `part`: the `$defs` its oneOf names, or the part itself."""
    definition = schema(target)["$defs"][part]
    refs = [branch["$ref"] for branch in definition.get("oneOf", [])]
    return [ref.rsplit("/", 1)[-1] for ref in refs] or [part]


def kind(target: str, part: str, data: Any) -> str:
    """The title of the message kind `data` is (a result also names its own kind, as
    `Result:ReadResult`); "?" when none fits."""
    defs = schema(target)["$defs"]
    for name in members(target, part):
        if validator(target, f"#/$defs/{name}").is_valid(data):
            title = str(defs[name]["title"])
            if name == "Result":
                inner = [
                    r["$ref"].rsplit("/", 1)[-1]
                    for r in defs[name]["properties"]["result"]["anyOf"]
                ]
                fits = [
                    r for r in inner if validator(target, f"#/$defs/{r}").is_valid(data["result"])
                ]
                title += ":" + "|".join(fits)
            return title
    return "?"
