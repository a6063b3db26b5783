"""The layering rule of docs/design.md (read from every module's imports with `ast`), and the package face."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import elelem_kernel

PACKAGE = Path(elelem_kernel.__file__).parent

#: layer -> imports it must never make (package-internal layers and outside libraries).
FORBIDDEN = {
    "agent": (
        "argparse",  # the command line's and the magic's flags: assembly/turn_flags.py
        "elelem_kernel.jupyter",
        "elelem_kernel.render.widget",
        "httpx",
        "ipywidgets",
        "IPython",
        "ipykernel",
        "nbformat",
        "nbclient",
        "jupyter_client",
        "mcp",
    ),
    "mcp": (
        "elelem_kernel.jupyter",
        "elelem_kernel.render",
        "elelem_kernel.providers",
        "elelem_kernel.tools",
        "ipywidgets",
        "IPython",
        "ipykernel",
        "httpx",
    ),
    "providers": (
        "elelem_kernel.tools",
        "elelem_kernel.jupyter",
        "elelem_kernel.render",
        "ipywidgets",
        "IPython",
        "ipykernel",
    ),
    "tools": (
        "elelem_kernel.jupyter",
        "elelem_kernel.render",
        "elelem_kernel.providers",
        "ipywidgets",
        "httpx",
    ),
    "review": (
        "elelem_kernel.jupyter",
        "elelem_kernel.render.widget",
        "ipywidgets",
        "IPython",
        "ipykernel",
        "httpx",
    ),
    "store": (
        "elelem_kernel.jupyter",
        "elelem_kernel.render",
        "elelem_kernel.providers",
        "ipywidgets",
        "IPython",
        "ipykernel",
        "httpx",
    ),
    "render": ("elelem_kernel.jupyter", "elelem_kernel.providers", "elelem_kernel.tools", "httpx"),
    "assembly": (
        "elelem_kernel.jupyter",
        "elelem_kernel.render",
        "ipywidgets",
        "IPython",
        "ipykernel",
        "httpx",
    ),
}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found |= {f"{name}.{alias.name}" for alias in node.names}
    return found


def test_imports_point_down_the_layers():
    problems = []
    for layer, forbidden in FORBIDDEN.items():
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            for name in imports_of(path):
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    problems.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert problems == []


#: The layers of the package, top first, as the module map in docs/internals.md draws them
#: (tests/test_docs_map.py holds the map to these). A module may import its own layer and the
#: layers below it, never one above; packages of one layer may use each other, but no import
#: cycle may form anywhere. A new package or top-level module must be declared here (and in
#: the map) before it can be imported by anything.
LAYERS: list[tuple[str, ...]] = [
    ("__init__", "acp", "cli"),  # the package face, the terminal front (cli/), the ACP agent
    ("jupyter",),  # magic, kernel, restore, notebook files, approvals, kernelspec install
    ("review",),  # code review: targets, diffs, findings, reports
    ("render",),  # views of a turn: terminal, static, widget
    ("assembly",),  # the composition root: built-ins registered, sessions built
    ("agent", "mcp"),  # session, turn loop, toolbox, registry; MCP servers as a tool source
    ("store",),  # the notebook as the store: records read, rebuilt, appended; ACP sessions
    ("tools",),  # the workspace tools
    ("providers",),  # models: stub, echo, demo, and the HTTP ones
    (
        "errors",
        "events",
        "findings",
        "images",
        "names",
        "options",
        "redaction",
        "schema_check",
        "sync",
        "text",
        "tokens",
        "visible",
        "_version",
    ),  # leaves
]


@dataclass(frozen=True)
class Edge:
    """One import: `source` imports `target` at `line`; `typing` when only for type checkers."""

    source: str
    target: str
    line: int
    typing: bool


def modules_in(package: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def edges_of(module: str, path: Path, modules: dict[str, Path]) -> list[Edge]:
    """The package-internal imports of one module, at any depth (in functions too)."""
    root = module.split(".")[0]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    edges: list[Edge] = []

    def add(name: str, line: int, typing: bool) -> None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != module:
            edges.append(Edge(module, name, line, typing))

    def visit(node: ast.AST, typing: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == root:
                    add(alias.name, node.lineno, typing)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.split(".")[0] == root:
                for alias in node.names:
                    add(f"{name}.{alias.name}", node.lineno, typing)
        for child in ast.iter_child_nodes(node):
            visit(child, typing or _type_checking_only(node) and child in node.body)

    visit(ast.parse(path.read_text(), str(path)), False)
    return edges


def layer_of(module: str) -> int | None:
    """The index in LAYERS of a module's top-level package (or module); None if undeclared."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    return next((i for i, layer in enumerate(LAYERS) if top in layer), None)


def layer_problems(package: Path) -> list[str]:
    """Undeclared packages, upward imports and import cycles, one line each."""
    modules = modules_in(package)
    problems = []
    undeclared = sorted({m.split(".")[1] for m in modules if layer_of(m) is None})
    for name in undeclared:
        problems.append(
            f"{package.name}/{name} is in no layer: declare it in LAYERS in "
            "tests/test_layers.py (top first, as in docs/internals.md's module map)"
        )
    edges = sorted(
        {e for m, p in modules.items() for e in edges_of(m, p, modules)},
        key=lambda e: (e.source, e.line, e.target),
    )
    for e in edges:
        here, there = layer_of(e.source), layer_of(e.target)
        if here is not None and there is not None and there < here:
            problems.append(
                f"{modules[e.source].relative_to(package.parent)}:{e.line} imports "
                f"{e.target}, a layer above it"
            )
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(edges)]
    return problems


def cycles(edges: list[Edge]) -> list[list[str]]:
    """One cycle through each group of modules that import each other at run time."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if not e.typing:
            graph.setdefault(e.source, set()).add(e.target)
    return [_cycle_in(graph, group) for group in _tangles(graph)]


def _tangles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of more than one module that reach each other (Tarjan's strongly
    connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """One cycle inside `group`, from its first module, closed (its first module again)."""
    start = min(group)
    path, node = [start], start
    while True:
        node = min(n for n in graph[node] if n in group)
        if node in path:
            return path[path.index(node) :] + [node]
        path.append(node)


def test_every_module_sits_in_a_layer_imports_point_down_and_nothing_cycles():
    assert layer_problems(PACKAGE) == []


def test_the_layer_check_finds_upward_imports_cycles_and_undeclared_packages(tmp_path):
    pkg = tmp_path / "elelem_kernel"
    for folder in ("agent", "providers", "render", "gadgets"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("")
    (pkg / "providers" / "up.py").write_text(
        "def later():\n    from elelem_kernel.render import view\n"
    )
    (pkg / "render" / "view.py").write_text("from ..agent import a\n")
    (pkg / "agent" / "a.py").write_text("from . import b\n")
    (pkg / "agent" / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .c import C\n"
        "def f():\n    from elelem_kernel.agent.a import x\n"
    )
    (pkg / "agent" / "c.py").write_text("from elelem_kernel.agent import b\n")
    (pkg / "gadgets" / "g.py").write_text("")
    assert layer_problems(pkg) == [
        "elelem_kernel/gadgets is in no layer: declare it in LAYERS in tests/test_layers.py "
        "(top first, as in docs/internals.md's module map)",
        "elelem_kernel/providers/up.py:2 imports elelem_kernel.render.view, a layer above it",
        "import cycle: elelem_kernel.agent.a -> elelem_kernel.agent.b -> elelem_kernel.agent.a",
    ]


#: acp/ and cli/ are fronts of one layer that keep the notebook as the store through store/,
#: never through each other. The one door: `elelem-kernel acp` is a subcommand of the command
#: line, which runs it by the acp package's `main`.
FRONT_DOORS = {("elelem_kernel.cli", "elelem_kernel.acp")}


def fronts_crossing(package: Path) -> list[str]:
    """Imports between acp/ and cli/ (at any depth), but for the door, one line each."""
    modules = modules_in(package)
    fronts = {f"{package.name}.acp", f"{package.name}.cli"}

    def front(module: str) -> str | None:
        return next((f for f in fronts if module == f or module.startswith(f + ".")), None)

    found = []
    for module, path in modules.items():
        for e in edges_of(module, path, modules):
            here, there = front(e.source), front(e.target)
            if here and there and here != there and (e.source, e.target) not in FRONT_DOORS:
                found.append(f"{path.relative_to(package.parent)}:{e.line} imports {e.target}")
    return sorted(found)


def test_the_acp_and_cli_fronts_never_import_each_other():
    assert fronts_crossing(PACKAGE) == []


def test_the_front_check_finds_a_front_reaching_into_the_other(tmp_path):
    pkg = tmp_path / "elelem_kernel"
    for folder in ("acp", "cli"):
        (pkg / folder).mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "acp" / "__init__.py").write_text("def main(args):\n    return 0\n")
    (pkg / "acp" / "store.py").write_text("from elelem_kernel.cli.notebook import append_turn\n")
    (pkg / "cli" / "__init__.py").write_text("def run():\n    from elelem_kernel import acp\n")
    (pkg / "cli" / "notebook.py").write_text(
        "def append_turn():\n    from elelem_kernel.acp.store import x\n"
    )
    assert fronts_crossing(pkg) == [
        "elelem_kernel/acp/store.py:1 imports elelem_kernel.cli.notebook",
        "elelem_kernel/cli/notebook.py:2 imports elelem_kernel.acp.store",
    ]


def unexplained_lazy_imports(package: Path) -> list[str]:
    """Package imports inside functions with no comment saying why (on the import lines or
    the line above): lazy imports are only for keeping `%load_ext` and the CLI cheap."""
    root = package.name
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = path.read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines), str(path))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in fn.body:
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                internal = isinstance(node, ast.ImportFrom) and (
                    node.level or (node.module or "").split(".")[0] == root
                )
                if not internal and not any(n.split(".")[0] == root for n in names):
                    continue
                first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
                while first > 0 and lines[first - 1].strip().startswith(("from ", "import ")):
                    first -= 1  # an import block shares one comment
                block = lines[first : last + 1]
                above = lines[first - 1].strip() if first else ""
                if not above.startswith("#") and not any("#" in line for line in block):
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return found


def test_every_lazy_import_of_the_package_says_why():
    assert unexplained_lazy_imports(PACKAGE) == []


def test_importing_the_package_is_cheap():
    code = (
        "import sys, elelem_kernel, elelem_kernel.agent.session, elelem_kernel.agent.registry; "
        "print(sorted(m for m in ('httpx', 'ipywidgets', 'nbformat', 'nbclient', 'jsonschema', 'mcp', 'acp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_face_is_sorted_and_resolves():
    assert elelem_kernel.__all__ == sorted(elelem_kernel.__all__)
    for name in elelem_kernel.__all__:
        assert getattr(elelem_kernel, name) is not None


def test_the_public_names_are_exactly_all():
    """Both ways: everything in `__all__` resolves, and every public name is in `__all__`."""
    code = (
        "import __future__, types, elelem_kernel as m\n"
        "for name in m.__all__: getattr(m, name)\n"
        "public = sorted(n for n, v in vars(m).items() if not n.startswith('_') and not "
        "isinstance(v, __future__._Feature) and (callable(v) or not isinstance(v, types.ModuleType)))\n"
        "print(public == m.__all__, sorted(set(public) ^ set(m.__all__)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True []"


def test_a_plugin_author_finds_what_they_touch_on_the_face():
    from elelem_kernel.agent.approval import ApprovalRequest, Approver
    from elelem_kernel.agent.toolbox import Call, Tool
    from elelem_kernel.events import Provider
    from elelem_kernel.review.report import ReviewResult
    from elelem_kernel.review.run import review

    face = elelem_kernel
    assert (face.Tool, face.Call, face.ApprovalRequest) == (Tool, Call, ApprovalRequest)
    assert (face.Approver, face.Provider, face.ReviewResult) == (Approver, Provider, ReviewResult)
    assert callable(face.review) and face.review.__call__.__doc__.startswith("Review a git change")
    assert review.__doc__ and "review" in face.__all__
