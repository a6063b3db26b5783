"""The `pyregex` child process: grep's Python engine, where a runaway pattern can be killed.

`pyregex.search` starts it with the job on stdin; it prints the bounded result as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from elelem_kernel.tools.search import _Matches, _search_python


def main() -> None:
    """Read the job, search, print the bounded result."""
    job = json.loads(sys.stdin.buffer.read())
    found = _Matches()
    _search_python(Path(job["root"]), job["pattern"], job["flags"], job["names"], found)
    result = {"lines": found.lines, "count": found.count, "files": sorted(found.files)}
    sys.stdout.buffer.write(json.dumps(result).encode("ascii"))
