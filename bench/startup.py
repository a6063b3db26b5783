"""9. Start-up: what a person waits for before the first answer.

The CLI: `elelem-kernel ask -p echo hi` as a process (the echo model answers at once, so
this is the process's own start, imports and turn) against `python -c "import httpx"`,
the least any Python client of a model starts with; alternating runs, the median of the
paired ratios; and how many modules the echo turn imports.

A kernel restoring its notebook: the Elelem kernel's first turn (echo) when its notebook
(ELELEM_NOTEBOOK) holds 100 turns, against the first turn when it holds none; paired
fresh kernels. Restoring reads the file, checks it is a notebook, checks every record and
rebuilds the conversation. Measured in this venv (`pip list` says whether rfc3987-syntax,
which makes importing jsonschema cost seconds, is there: `data["rfc3987_syntax"]`).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import clean_env, interleave, median, ms, paired, result
from bench.kernels import Kernels
from bench.streaming import cli_command

NAME = "startup"

#: Imports an echo turn of the CLI makes, counted in its own process.
COUNT = """
import json, sys
before = len(sys.modules)
from elelem_kernel.cli import main
main(["ask", "-p", "echo", "hi"])
print(json.dumps(len(sys.modules) - before))
"""


def run(quick: bool = False, smoke: bool = False, turns: int | None = None) -> dict:
    reps = 1 if smoke else 5 if quick else 9
    turns = turns or (3 if smoke else 100)
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-startup-"))
    data: dict = {"reps": reps, "turns": turns}
    data["rfc3987_syntax"] = importlib.util.find_spec("rfc3987_syntax") is not None
    try:
        rows = cli_rows(tmp, reps, data, warm_up=not smoke)
        rows += restore_rows(tmp, 1 if smoke else 5 if quick else 7, turns, data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result("startup", f"9. Start-up (CLI echo turn; restoring {turns} turns)", rows, **data)


def cli_rows(tmp: Path, reps: int, data: dict, warm_up: bool = True) -> list[tuple]:
    ws = tmp / "ws"
    ws.mkdir()
    env = clean_env(HOME=str(tmp / "home"))

    def process(*argv: str):
        def go() -> None:
            subprocess.run(argv, cwd=ws, env=env, check=True, capture_output=True)

        return go

    cases = {
        "ask": process(*cli_command(), "ask", "-p", "echo", "hi"),
        "httpx": process(sys.executable, "-c", "import httpx"),
    }
    if warm_up:
        interleave(cases, 1)  # bytecode caches, page cache
    t = interleave(cases, reps)
    count = subprocess.run(
        [sys.executable, "-c", COUNT], cwd=ws, env=env, check=True, capture_output=True
    )
    modules = json.loads(count.stdout.decode().strip().splitlines()[-1])
    data.update(cli=t, cli_modules=modules)
    return [
        ('python -c "import httpx"', ms(median(t["httpx"])), "ms (the floor)"),
        ("elelem-kernel ask -p echo hi", ms(median(t["ask"])), f"ms, {modules} modules imported"),
        ("ask -p echo ÷ import httpx", paired(t["ask"], t["httpx"]), "× (alternating runs)"),
    ]


def restore_rows(tmp: Path, reps: int, turns: int, data: dict) -> list[tuple]:
    """First turn in a fresh Elelem kernel whose notebook has `turns` turns, and none."""
    from bench.notebook_memory import scale_up, write_turns
    from elelem_kernel.store import ipynb_json
    from elelem_kernel.store.notebook import new_notebook

    ws = tmp / "restore"
    ws.mkdir()
    (ws / "README.md").write_text("# Project\n\nTwo modules, a few functions each.\n")
    write_turns(ws / "few.ipynb", ws, 3)
    scale_up(ws / "few.ipynb", ws / "full.ipynb", turns)
    ipynb_json.write(new_notebook(), ws / "empty.ipynb")
    kernels = Kernels(tmp / "k")
    first: dict[str, list[float]] = {"full": [], "empty": []}

    def kernel(name: str):
        def go() -> None:
            env = kernels.env(ELELEM_PROVIDER="echo", ELELEM_NOTEBOOK=str(ws / f"{name}.ipynb"))
            with kernels.start("elelem", env, cwd=ws) as k:
                cell = k.cell("hi", cell_id="c1")
                if not cell.ok:
                    raise RuntimeError(f"first turn failed: {'; '.join(cell.errors())}")
                if name == "full" and f"restored {turns} turns" not in json.dumps(
                    [m["content"] for _, m in cell.msgs]
                ):
                    raise RuntimeError(f"the kernel did not say it restored {turns} turns")
                first[name].append(cell.wall)

        return go

    interleave({name: kernel(name) for name in first}, reps)
    data["first_turn"] = first
    return [
        (f"first turn, kernel restoring {turns} turns", ms(median(first["full"])), "ms"),
        ("first turn, kernel with an empty notebook", ms(median(first["empty"])), "ms"),
        (
            "first turn restoring the notebook ÷ empty",
            paired(first["full"], first["empty"]),
            f"× ({turns} turns; fresh kernels, in turn)",
        ),
    ]
