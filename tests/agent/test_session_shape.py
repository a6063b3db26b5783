"""The session's shape: finished by its maker, a small public face, no cycle in `agent/`.

A front hands `assembly/` what it has (`agent/front.Front`) and gets a finished session;
what changes from turn to turn comes with the turn (`TurnSettings`). These hold that:
nothing outside `agent/` and `assembly/` assigns a session's attributes, `Session` keeps
at most 25 public members, and the modules of `agent/` import each other without a
cycle, counting the imports made only for type checkers.
"""

from __future__ import annotations

import ast
from pathlib import Path

from elelem_kernel.agent.session import Session
from tests.scripted import Scripted
from tests.test_layers import PACKAGE, Edge, cycles, edges_of, modules_in

#: Where a session is made and run: the only places that may set its attributes.
OWNERS = ("agent", "assembly")


def public_members(session: Session) -> list[str]:
    """What a session shows: its attributes (set in `__init__`), methods and properties,
    inherited ones included."""
    names = {n for n in dir(type(session)) if not n.startswith("_")}
    names |= {n for n in vars(session) if not n.startswith("_")}
    return sorted(names)


def test_a_session_has_at_most_25_public_members(tmp_path):
    members = public_members(Session(Scripted(), workspace=tmp_path))
    assert len(members) <= 25, members


def agent_cycles(package: Path) -> list[list[str]]:
    """The import cycles among `agent/`'s modules, type-only imports counted as imports."""
    modules = modules_in(package)
    inside = f"{package.name}.agent"
    edges = [
        Edge(e.source, e.target, e.line, False)
        for m, p in modules.items()
        if m.startswith(inside + ".")
        for e in edges_of(m, p, modules)
        if e.target.startswith(inside + ".")
    ]
    return cycles(edges)


def test_agent_has_no_import_cycle_even_counting_type_only_imports():
    assert agent_cycles(PACKAGE) == []


def test_the_cycle_check_counts_type_only_imports(tmp_path):
    agent = tmp_path / "elelem_kernel" / "agent"
    agent.mkdir(parents=True)
    for name in ("__init__", "turn", "session"):
        (agent / f"{name}.py").write_text("")
    (tmp_path / "elelem_kernel" / "__init__.py").write_text("")
    (agent / "session.py").write_text("from elelem_kernel.agent.turn import Turn\n")
    (agent / "turn.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from elelem_kernel.agent.session import Session\n"
    )
    assert agent_cycles(tmp_path / "elelem_kernel") == [
        ["elelem_kernel.agent.session", "elelem_kernel.agent.turn", "elelem_kernel.agent.session"]
    ]


def _of_a_session(target: ast.expr) -> bool:
    """Whether `target` is an attribute of a session: `session.x`, `self.session.x`,
    `live.session.x`, `x.session.y.z` (the session found by its name)."""
    if not isinstance(target, ast.Attribute):
        return False
    node = target.value
    while True:
        if isinstance(node, ast.Name):
            return node.id == "session"
        if not isinstance(node, ast.Attribute):
            return False
        if node.attr == "session":
            return True
        node = node.value


def _targets(node: ast.AST) -> list[ast.expr]:
    """The targets an assignment statement sets, tuples unpacked."""
    if isinstance(node, ast.Assign):
        found = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        found = [node.target]
    else:
        return []
    flat: list[ast.expr] = []
    while found:
        target = found.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            found += target.elts
        else:
            flat.append(target)
    return flat


def session_patches(package: Path) -> list[str]:
    """Every assignment to a session's attribute outside `agent/` and `assembly/`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] in OWNERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _targets(node):
                if _of_a_session(target):
                    where = path.relative_to(package.parent)
                    found.append(f"{where}:{node.lineno}: {ast.unparse(target)}")
    return found


def test_no_front_assigns_a_session_attribute():
    assert session_patches(PACKAGE) == []


def test_the_scan_finds_each_way_of_reaching_a_session(tmp_path):
    package = tmp_path / "elelem_kernel"
    (package / "agent").mkdir(parents=True)
    (package / "jupyter").mkdir()
    (package / "agent" / "session.py").write_text("session.mode = 'plan'\n")
    (package / "jupyter" / "front.py").write_text(
        "session.approver = a\n"
        "self.session.allow_hint = h\n"
        "live.session.mode: str = m\n"
        "x.session.ledger.hint = h\n"
        "link, session.live_notebook = session.live_notebook, None\n"
        "session.turns += 1\n"
        "self.session = session\n"
        "sessions.x = 1\n"
        "session.toolbox.put(tool)\n"
    )
    assert session_patches(package) == [
        "elelem_kernel/jupyter/front.py:1: session.approver",
        "elelem_kernel/jupyter/front.py:2: self.session.allow_hint",
        "elelem_kernel/jupyter/front.py:3: live.session.mode",
        "elelem_kernel/jupyter/front.py:4: x.session.ledger.hint",
        "elelem_kernel/jupyter/front.py:5: session.live_notebook",
        "elelem_kernel/jupyter/front.py:6: session.turns",
    ]
