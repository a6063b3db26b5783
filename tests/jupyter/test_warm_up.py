"""The warm-up does a first turn's first-time work beyond imports (jupyter/warm_up.py)."""

from __future__ import annotations

import json
import subprocess
import sys

#: Which of a first turn's first-time pieces are ready after the modules alone, and after
#: `import_all` (a reply's first Python code block: pygments' lexer for it).
READY = """
import importlib, json, sys
from elelem_kernel.jupyter import warm_up
for name in warm_up.MODULES:
    importlib.import_module(name)
before = "pygments.lexers.python" in sys.modules
warm_up.import_all()
print(json.dumps({"before": before, "after": "pygments.lexers.python" in sys.modules}))
"""


def test_the_warm_up_readies_a_python_code_blocks_highlighting():
    done = subprocess.run(
        [sys.executable, "-c", READY], capture_output=True, text=True, check=True, timeout=120
    )
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said == {"before": False, "after": True}
