"""`bash scripts/lab.sh` installs `elelem-kernel[lab]`: that must be everything the example
notebooks use (their imports, the modules they run with `-m`, the code the agent ran in
their saved turns) and Notebook 7, which the README lists next to JupyterLab."""

from __future__ import annotations

import ast
import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

tomllib = pytest.importorskip("tomllib")
requirements = pytest.importorskip("packaging.requirements")

ROOT = Path(__file__).resolve().parents[1]
RUN_MODULE = re.compile(r"""["']-m["'],\s*["']([\w.]+)["']""")


def _imports(code: str) -> set[str]:
    lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:  # a prompt cell of the Elelem kernel
        return set()
    found = {m.group(1).split(".")[0] for m in RUN_MODULE.finditer(code)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _ran_by_the_agent(value: Any) -> list[str]:
    """The `code` of every python tool call in a saved turn record."""
    if isinstance(value, dict):
        code = value.get("arguments", {}).get("code") if value.get("name") == "python" else None
        found = [code] if isinstance(code, str) else []
        return found + [c for v in value.values() for c in _ran_by_the_agent(v)]
    if isinstance(value, list):
        return [c for v in value for c in _ran_by_the_agent(v)]
    return []


def notebook_modules() -> dict[str, set[str]]:
    """Top-level modules each example notebook needs, by notebook name."""
    needs: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        records = [o.get("metadata", {}) for c in cells for o in c.get("outputs", [])]
        code += _ran_by_the_agent(records)
        needs[path.name] = {m for text in code for m in _imports(text)}
    return needs


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def lab_closure() -> set[str]:
    """Distributions `pip install elelem-kernel[lab]` brings, as this venv has them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pending = [*project["dependencies"], *project["optional-dependencies"]["lab"]]
    seen: set[str] = set()
    while pending:
        req = requirements.Requirement(pending.pop())
        name = _name(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            needs = [requirements.Requirement(text) for text in metadata.requires(name) or []]
        except metadata.PackageNotFoundError:
            continue
        for need in needs:
            marker = need.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in ("", *req.extras)):
                extras = f"[{','.join(sorted(need.extras))}]" if need.extras else ""
                pending.append(f"{need.name}{extras}")
    return seen


def test_the_lab_extra_installs_what_every_example_notebook_uses():
    closure = lab_closure()
    owners = metadata.packages_distributions()
    missing = {}
    for notebook, modules in notebook_modules().items():
        for module in sorted(modules - set(sys.stdlib_module_names) - {"elelem_kernel"}):
            dists = {_name(d) for d in owners.get(module, [module])}
            if not dists & closure:
                missing.setdefault(notebook, []).append(module)
    assert not missing, f"not installed by elelem-kernel[lab]: {missing}"


def test_the_lab_extra_brings_notebook_7_the_readme_lists():
    assert "Notebook 7" in (ROOT / "README.md").read_text()
    assert "notebook" in lab_closure()


def test_the_notebooks_need_more_than_the_standard_library():
    """The scan itself sees the imports it must check (else the test above checks nothing)."""
    needs = notebook_modules()
    assert "matplotlib" in needs["elelem_kernel.ipynb"]
    assert "mcp_server_time" in needs["mcp.ipynb"]
