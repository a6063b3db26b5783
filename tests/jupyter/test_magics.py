from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("httpx", "httpx_sse", "ipywidgets", "mistune", "jsonschema", "elelem_kernel.agent.session")

LOAD = f"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "elelem_kernel")
assert "elelem" in ip.magics_manager.magics["cell"], "cell magic missing"
assert "elelem" in ip.magics_manager.magics["line"], "line magic missing"
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def test_load_ext_imports_nothing_heavy(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", LOAD],
        capture_output=True,
        text=True,
        env={"IPYTHONDIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
