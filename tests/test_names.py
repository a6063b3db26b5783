"""The names Jupyter knows us by are spelled once, in `elelem_kernel/names.py`."""

from __future__ import annotations

import ast
from pathlib import Path

from elelem_kernel import names
from tests.test_layers import PACKAGE

SPELLED = {names.KERNEL_NAME, names.KERNEL_DISPLAY_NAME, names.RECORD_KEY}
#: The agent's own name in other protocols, which is neither the kernel's nor the record's.
ELSEWHERE = {
    ("acp/agent.py", "elelem"),  # the ACP agent's `agent_info` name
    ("acp/agent.py", "Elelem"),  # and its title
    ("acp/persona.py", "Elelem"),  # jupyter-ai's persona
}


def bare_names(package: Path) -> list[str]:
    """Where a module outside names.py writes one of its strings itself."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where == "names.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and node.value in SPELLED:
                if (where, node.value) not in ELSEWHERE:
                    found.append(f"{package.name}/{where}:{node.lineno} writes {node.value!r}")
    return found


def test_the_kernel_name_and_the_record_key_are_spelled_only_in_names():
    assert bare_names(PACKAGE) == []


def test_a_bare_kernel_name_is_found(tmp_path):
    pkg = tmp_path / "elelem_kernel"
    (pkg / "jupyter").mkdir(parents=True)
    (pkg / "names.py").write_text('KERNEL_NAME = "elelem"\n')
    (pkg / "jupyter" / "kernel.py").write_text(
        '"""The elelem kernel."""\nimplementation = "elelem"\nlanguage = "elelem-ish"\n'
    )
    assert bare_names(pkg) == ["elelem_kernel/jupyter/kernel.py:2 writes 'elelem'"]
