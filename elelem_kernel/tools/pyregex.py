"""Python's `re` over the workspace's files, in a child process that can be stopped.

ripgrep's engine cannot backtrack, but the patterns it rejects (look-arounds,
backreferences) and every pattern when ripgrep is missing are matched with Python's re,
which does: `(?=a)(a+)+$` against a line of a's never ends. A thread running it holds the
GIL, so neither a deadline nor Ctrl-C nor a kernel interrupt could stop it in-process. So
the matching runs in a child Python (`-I`: no PYTHONPATH, no working folder on its path,
so nothing in the workspace can stand in for our modules), given the job on stdin, and
killed through `Children` at the deadline or when the call is cancelled. It prints the
bounded result (`search._Matches`) as one JSON object; files are read as the in-process
engine read them, so the output is the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from elelem_kernel.errors import GroupStopped
from elelem_kernel.tools.children import Children
from elelem_kernel.tools.declaration import Result

#: Where the `elelem_kernel` package is, put first on the child's path.
_HOME = str(Path(__file__).resolve().parents[2])
_CODE = (
    f"import sys; sys.path.insert(0, {_HOME!r}); "
    "from elelem_kernel.tools.pyregex_child import main; main()"
)


def search(
    root: Path, pattern: str, flags: int, names: list[str], children: Children
) -> Result | str:
    """The child's result for `pattern` over `names`, or why there is none."""
    job = json.dumps({"root": str(root), "pattern": pattern, "flags": flags, "names": names})
    try:
        proc = children.popen(
            [sys.executable, "-I", "-c", _CODE],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except GroupStopped as e:
        return f"stopped ({e})"
    try:
        out, err = proc.communicate(job.encode("utf-8"))
    except OSError as e:
        proc.kill()
        proc.wait()
        return f"{type(e).__name__}: {e}"
    if children.reason is not None:
        return f"stopped ({children.reason})"
    if proc.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        return lines[-1][-500:] if lines else f"exit status {proc.returncode}"
    answer = json.loads(out)
    return answer if isinstance(answer, dict) else f"unexpected answer: {str(answer)[:500]}"
