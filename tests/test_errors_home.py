"""Every exception class the package defines lives in `errors.py`, its one home."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import elelem_kernel
from elelem_kernel import errors

PACKAGE = Path(elelem_kernel.__file__).parent

#: the names a class that is an exception derives from: builtins' and errors.py's.
EXCEPTIONS = {
    name
    for source in (vars(builtins), vars(errors))
    for name, value in source.items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def exception_classes(tree: ast.AST) -> list[str]:
    """The classes in `tree` whose bases name an exception (`Exception`, `ToolError`, ...)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [
                b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
            ]
            if EXCEPTIONS.intersection(bases):
                found.append(node.name)
    return found


def test_every_exception_class_is_defined_in_errors_py():
    elsewhere = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "errors.py" or path.parent != PACKAGE
        for name in exception_classes(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert not elsewhere, "define these in elelem_kernel/errors.py"


def test_the_check_sees_an_exception_class_outside_errors_py():
    source = "class A(Exception): ...\nclass B(errors.ToolError): ...\nclass C(dict): ...\n"
    assert exception_classes(ast.parse(source)) == ["A", "B"]


def test_the_moved_signals_keep_their_kinds():
    assert issubclass(errors.TurnInterrupted, KeyboardInterrupt)
    assert not issubclass(errors.Stopped, Exception)  # passes `except Exception` on purpose
    assert issubclass(errors.OverBudget, errors.ElelemError)
    assert errors.BudgetStopped()._render_traceback_()[0].startswith("BudgetStopped: ")
