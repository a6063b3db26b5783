"""The `pyregex` child process: grep's Python engine, where a runaway pattern can be killed.

`pyregex.search` starts it with the job on stdin; it prints the bounded result as JSON.
It ignores SIGINT: a kernel interrupt signals the kernel's whole process group, and the
kernel, not this child, decides what stops (it kills the child and ends the turn as
interrupted). Dying of the signal instead would hand the model a failed grep and race
the interrupt to the end of the turn.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from elelem_kernel.tools.search import _Matches, _search_python


def main() -> None:
    """Read the job, search, print the bounded result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    job = json.loads(sys.stdin.buffer.read())
    found = _Matches()
    _search_python(Path(job["root"]), job["pattern"], job["flags"], job["names"], found)
    result = {"lines": found.lines, "count": found.count, "files": sorted(found.files)}
    sys.stdout.buffer.write(json.dumps(result).encode("ascii"))
