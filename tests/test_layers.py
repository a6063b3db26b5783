"""The layering rule of DESIGN.md, and the package face."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import elelem_kernel

PACKAGE = Path(elelem_kernel.__file__).parent

#: layer -> imports it must never make (package-internal layers and outside libraries).
FORBIDDEN = {
    "agent": (
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
    "render": ("elelem_kernel.jupyter", "elelem_kernel.providers", "elelem_kernel.tools", "httpx"),
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


def test_importing_the_package_is_cheap():
    code = (
        "import sys, elelem_kernel, elelem_kernel.agent.session, elelem_kernel.agent.registry; "
        "print(sorted(m for m in ('httpx', 'ipywidgets', 'nbformat', 'nbclient', 'jsonschema', 'mcp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_face_is_sorted_and_resolves():
    assert elelem_kernel.__all__ == sorted(elelem_kernel.__all__)
    for name in elelem_kernel.__all__:
        assert getattr(elelem_kernel, name) is not None
