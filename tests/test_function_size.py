"""No function of the package passes `MAX_LINES` lines: a longer one is split into named
steps (ruff's C901, configured in pyproject.toml, bounds its branches the same way)."""

from __future__ import annotations

import ast
from pathlib import Path

import elelem_kernel

PACKAGE = Path(elelem_kernel.__file__).parent
MAX_LINES = 60  #: from `def` to the last line of the body; decorators do not count

#: Functions let off the limit for a while (the test below says when one no longer needs it).
EXEMPT: set[str] = set()


def lengths(tree: ast.AST, prefix: str = "") -> dict[str, int]:
    """Each function's (and method's, nested too) qualified name -> its lines."""
    found: dict[str, int] = {}
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert node.end_lineno is not None
            found[prefix + node.name] = node.end_lineno - node.lineno + 1
            found.update(lengths(node, f"{prefix}{node.name}."))
        elif isinstance(node, ast.ClassDef):
            found.update(lengths(node, f"{prefix}{node.name}."))
        else:
            found.update(lengths(node, prefix))
    return found


def package_lengths() -> dict[str, int]:
    return {
        f"{path.relative_to(PACKAGE).as_posix()}:{name}": n
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, n in lengths(ast.parse(path.read_text(encoding="utf-8"))).items()
    }


def test_no_function_passes_the_line_limit():
    every = package_lengths()
    long = {name: n for name, n in every.items() if n > MAX_LINES and name not in EXEMPT}
    assert not long, f"split these into named steps of at most {MAX_LINES} lines"
    stale = {name for name in EXEMPT if every.get(name, 0) <= MAX_LINES}
    assert not stale, "these fit now: drop them from EXEMPT"


def test_the_count_excludes_decorators_and_sees_nested_functions_and_methods():
    source = (
        "@decorator\n"
        "@another(1)\n"
        "def f(x):\n"
        "    def inner():\n"
        "        return 1\n"
        "    return inner\n"
        "class C:\n"
        "    async def m(self):\n"
        "        pass\n"
    )
    assert lengths(ast.parse(source)) == {"f": 4, "f.inner": 2, "C.m": 2}
