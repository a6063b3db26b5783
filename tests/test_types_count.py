"""How loosely the package is typed, counted, so the counts can only go down.

Two figures are counted over every ``.py`` file of ``elelem_kernel`` with :mod:`ast`:

- ``dict[str, Any]``: a mapping keyed by ``str`` whose values are ``Any`` —
  ``dict``/``Dict``/``Mapping``/``MutableMapping`` (bare or ``typing.``-qualified),
  anywhere in the code (annotations, string annotations, ``cast``, ``TypedDict`` calls).
- plain ``Any``: every other use of ``Any`` (``Callable[..., Any]``, ``list[Any]``,
  ``cast(Any, x)``, a bare ``-> Any``), i.e. every ``Any`` that is not the value type of
  one of the mappings above.

Each is divided by the package's non-blank lines of ``.py`` files (comments and
docstrings count; blank lines do not) and printed per 1,000 lines. The ceilings below are
the counts when they were last lowered: a change that adds an ``Any`` fails here, one that
removes some should lower the ceiling. An alias cannot hide ``Any`` from the count: a
module- or class-level assignment (``X = dict[str, Any]``, ``X: TypeAlias = ...``, or a
``type X = ...`` statement) whose value mentions ``Any`` fails the alias test unless it is
named in ``WIRE_ALIASES`` with the reason it is genuinely arbitrary JSON (or in
``NOT_YET_TYPED``, the aliases another change is removing, which may only shrink).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import elelem_kernel

PACKAGE = Path(elelem_kernel.__file__).parent

# The counts (not rates) when last measured; lower them when you remove an Any.
ANY_CEILING = 235
DICT_ANY_CEILING = 88

# The goal, per 1,000 non-blank lines (issue 38): where comparable packages sit.
ANY_GOAL_PER_1000 = 15
DICT_ANY_GOAL_PER_1000 = 8

# Aliases allowed to contain Any: "module.py:Name" -> why the values are arbitrary JSON.
WIRE_ALIASES: dict[str, str] = {
    "tools/declaration.py:Arguments": "a tool call's arguments: the JSON object a model sent",
    "tools/declaration.py:Result": "a tool's result: the JSON object sent back to the model",
}
# Aliases that still hide Any and are being rewritten elsewhere (issue 38: the Tool and
# Provider seams); each must still exist, so this list can only shrink.
NOT_YET_TYPED: dict[str, str] = {
    "agent/registry.py:Setup": "a plugin's setup gets the session or a command's protocol",
}

MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}


@dataclass
class Counts:
    """What one walk found: plain ``Any``s, ``dict[str, Any]``s, lines and aliases."""

    any: list[str] = field(default_factory=list)
    dict_any: list[str] = field(default_factory=list)
    lines: int = 0
    aliases: list[str] = field(default_factory=list)


def _any_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The local names bound to ``typing.Any`` and to the ``typing`` module itself."""
    any_names, typing_names = {"Any"}, {"typing", "typing_extensions"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("typing", "typing_extensions"):
            any_names |= {a.asname or a.name for a in node.names if a.name == "Any"}
        elif isinstance(node, ast.Import):
            typing_names |= {
                a.asname or a.name for a in node.names if a.name in ("typing", "typing_extensions")
            }
    return any_names, typing_names


class _Finder:
    """Finds the ``Any`` nodes of one module, and which are a mapping's value type."""

    def __init__(self, tree: ast.Module) -> None:
        self.any_names, self.typing_names = _any_names(tree)

    def is_any(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.any_names
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "Any"
            and isinstance(node.value, ast.Name)
            and node.value.id in self.typing_names
        )

    def is_str_any_mapping(self, node: ast.Subscript) -> bool:
        head = node.value
        name = head.id if isinstance(head, ast.Name) else getattr(head, "attr", "")
        args = node.slice
        return (
            name in MAPPINGS
            and isinstance(args, ast.Tuple)
            and len(args.elts) == 2
            and isinstance(args.elts[0], ast.Name)
            and args.elts[0].id == "str"
            and self.is_any(args.elts[1])
        )

    def count(self, tree: ast.AST, where: str, counts: Counts) -> None:
        """Add every ``Any`` under ``tree`` (string annotations parsed too) to ``counts``."""
        inside_mapping: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and self.is_str_any_mapping(node):
                assert isinstance(node.slice, ast.Tuple)
                inside_mapping.add(id(node.slice.elts[1]))
                counts.dict_any.append(f"{where}:{node.lineno}")
        for node in ast.walk(tree):
            if self.is_any(node) and id(node) not in inside_mapping:
                line = getattr(node, "lineno", None)
                counts.any.append(where if line is None else f"{where}:{line}")
        for parsed, line in _string_annotations(tree):
            self.count(parsed, f"{where}:{line}", counts)

    def mentions_any(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted alias
            try:
                node = ast.parse(node.value, mode="eval")
            except SyntaxError:
                return False
        probe = Counts()
        self.count(node, "", probe)
        return bool(probe.any or probe.dict_any)


def _string_annotations(tree: ast.AST) -> Iterator[tuple[ast.Expression, int]]:
    """The string annotations under ``tree`` (``x: "dict[str, Any]"``, ``cast("Any", v)``),
    parsed; other strings (docstrings that say "Any other ...") are not type expressions."""
    for node in ast.walk(tree):
        annotations: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            every = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            annotations += [arg.annotation for arg in every if arg is not None]
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
            if "TypeAlias" in ast.unparse(node.annotation):  # its value is a type too
                annotations.append(node.value)
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("cast") and node.args:
            annotations.append(node.args[0])
        for annotation in annotations:
            for inner in ast.walk(annotation) if annotation is not None else ():
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    try:
                        yield ast.parse(inner.value, mode="eval"), inner.lineno
                    except SyntaxError:
                        continue


def _aliases(tree: ast.Module, finder: _Finder, where: str) -> list[str]:
    """Module- and class-level assignments whose value mentions ``Any``."""
    bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    found = []
    for body in bodies:
        for stmt in body:
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                is_alias = "TypeAlias" in ast.unparse(stmt.annotation)
                if not is_alias and not _is_class_level(tree, stmt):
                    continue
                targets, value = [stmt.target], stmt.value
            elif type(stmt).__name__ == "TypeAlias":  # `type X = ...` (Python 3.12+)
                targets, value = [stmt.name], stmt.value  # type: ignore[attr-defined]
            else:
                continue
            if finder.mentions_any(value):
                names = [ast.unparse(t) for t in targets]
                found += [f"{where}:{name}" for name in names]
    return found


def _is_class_level(tree: ast.Module, stmt: ast.stmt) -> bool:
    return stmt not in tree.body


def count_package(root: Path = PACKAGE) -> Counts:
    """Walk every ``.py`` file under ``root`` and count."""
    counts = Counts()
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        counts.lines += sum(1 for line in source.splitlines() if line.strip())
        tree = ast.parse(source)
        finder = _Finder(tree)
        where = path.relative_to(root).as_posix()
        body = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        for stmt in body:
            finder.count(stmt, where, counts)
        counts.aliases += _aliases(tree, finder, where)
    return counts


def _per_1000(n: int, lines: int) -> float:
    return round(1000 * n / lines, 1)


@cache
def _package() -> Counts:
    return count_package()


def test_any_and_dict_any_only_go_down() -> None:
    counts = _package()
    any_rate = _per_1000(len(counts.any), counts.lines)
    dict_rate = _per_1000(len(counts.dict_any), counts.lines)
    print(
        f"\n{counts.lines} non-blank lines: {len(counts.any)} Any ({any_rate}/1,000, "
        f"goal {ANY_GOAL_PER_1000}), {len(counts.dict_any)} dict[str, Any] "
        f"({dict_rate}/1,000, goal {DICT_ANY_GOAL_PER_1000})"
    )
    assert len(counts.dict_any) <= DICT_ANY_CEILING, (
        f"{len(counts.dict_any)} dict[str, Any] > ceiling {DICT_ANY_CEILING}: "
        "type the structure (TypedDict, dataclass) or the wire value (object)"
    )
    assert len(counts.any) <= ANY_CEILING, (
        f"{len(counts.any)} Any > ceiling {ANY_CEILING}: say what the value is"
    )


def test_no_alias_hides_any() -> None:
    aliases = _package().aliases
    hidden = [a for a in aliases if a not in WIRE_ALIASES and a not in NOT_YET_TYPED]
    assert not hidden, f"aliases whose value mentions Any (counted, but hidden at use): {hidden}"
    gone = [a for a in NOT_YET_TYPED if a not in aliases]
    assert not gone, f"typed now: take them out of NOT_YET_TYPED: {gone}"


def _counts_of(tmp_path: Path, source: str) -> Counts:
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    return count_package(tmp_path)


def test_the_counter_sees_each_spelling(tmp_path: Path) -> None:
    counts = _counts_of(
        tmp_path,
        "from typing import Any, Mapping, cast\n"
        "import typing as t\n\n"
        "def f(a: dict[str, Any], b: 'Mapping[str, Any]') -> list[t.Any]:\n"
        "    return cast(Any, a)\n\n"
        "def g(c: t.Dict[str, t.Any], d: dict[int, Any]) -> None:\n"
        "    'Any other value is refused.'\n",
    )
    assert len(counts.dict_any) == 3
    assert len(counts.any) == 3  # list[t.Any], cast(Any, ...), dict[int, Any]
    assert counts.lines == 6


def test_the_counter_refuses_an_alias(tmp_path: Path) -> None:
    counts = _counts_of(
        tmp_path,
        "from typing import Any, TypeAlias\n"
        "Json = dict[str, Any]\n"
        "Blob: TypeAlias = 'list[Any]'\n"
        "Fine = dict[str, object]\n"
        "class C:\n"
        "    Inner = Any\n",
    )
    assert counts.aliases == ["m.py:Json", "m.py:Blob", "m.py:Inner"]
    assert len(counts.dict_any) == 1 and len(counts.any) == 2
