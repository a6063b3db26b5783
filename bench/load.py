"""3. Load cost: `%load_ext` in fresh processes, and kernel start to ready.

Each case is a fresh interpreter that creates an IPython shell and then runs one
`%load_ext`; it reports the load's own time and how many modules it imported, and the
process is timed from outside too. Bare IPython in each interpreter is the reference:
ours runs in this venv, jupyter-ai-magics in its own (bench/aivenv.py). Then the Elelem
kernel's start to ready (kernel_info answered) vs the stock python3 kernel, paired runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import aivenv
from bench.common import clean_env, interleave, median, ms, paired, result
from bench.kernels import Kernels

NAME = "load"

PROBE = """
import sys, time, json
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
before = set(sys.modules)
start = time.perf_counter()
if sys.argv[1]:
    ip.run_line_magic("load_ext", sys.argv[1])
took = time.perf_counter() - start
print(json.dumps({"load": took, "modules": len(set(sys.modules) - before)}))
"""


def probe(python: str, extension: str, env: dict) -> dict:
    out = subprocess.run(
        [python, "-c", PROBE, extension], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode:
        raise RuntimeError(f"{extension or 'IPython'} failed to load: {out.stderr[-400:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool = False, smoke: bool = False, reps: int | None = None) -> dict:
    reps = reps or (1 if smoke else 3 if quick else 7)
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-load-"))
    env = clean_env(IPYTHONDIR=str(tmp / "ipython"), HOME=str(tmp))
    rows, data = [], {}
    try:
        ours = sys.executable
        cases = {"bare": (ours, ""), "elelem": (ours, "elelem_kernel")}
        try:
            theirs = str(aivenv.python(create=not smoke))
            cases.update(ai_bare=(theirs, ""), jupyter_ai=(theirs, "jupyter_ai_magics"))
        except Exception as error:
            rows.append(("jupyter-ai-magics", "skipped", str(error)[:120]))
        probes: dict[str, list[dict]] = {name: [] for name in cases}

        def case(name: str):
            return lambda: probes[name].append(probe(*cases[name], env))

        if not smoke:
            interleave({name: case(name) for name in cases}, 1)  # warm-up, IPython dirs
            probes = {name: [] for name in cases}
        walls = interleave({name: case(name) for name in cases}, reps)
        data.update(walls=walls, probes=probes)
        for name, label in (("elelem", "elelem_kernel"), ("jupyter_ai", "jupyter_ai_magics")):
            if name not in cases:
                continue
            bare = "bare" if name == "elelem" else "ai_bare"
            load = [p["load"] for p in probes[name]]
            modules = int(median([p["modules"] for p in probes[name]]))
            rows += [
                (f"%load_ext {label}", ms(median(load)), f"ms, {modules} modules imported"),
                (
                    "  process wall ÷ bare IPython",
                    paired(walls[name], walls[bare]),
                    f"× ({ms(median(walls[name]))} vs {ms(median(walls[bare]))} ms)",
                ),
            ]
        if "jupyter_ai" in cases:
            ratio = paired(
                [p["load"] for p in probes["elelem"]], [p["load"] for p in probes["jupyter_ai"]]
            )
            rows.append(("%load_ext: ours ÷ jupyter-ai", ratio, "×"))
        rows += kernel_rows(tmp, reps, data, warm_up=not smoke)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result("load", "3. Load cost", rows, **data)


def kernel_rows(tmp: Path, reps: int, data: dict, warm_up: bool = True) -> list[tuple]:
    kernels = Kernels(tmp / "k")
    env = kernels.env()
    ready: dict[str, list[float]] = {"python3": [], "elelem": []}

    def start(name: str):
        def go() -> None:
            with kernels.start(name, env, cwd=tmp) as kernel:
                ready[name].append(kernel.ready)

        return go

    if warm_up:
        interleave({name: start(name) for name in ready}, 1)
        ready = {name: [] for name in ready}
    interleave({name: start(name) for name in ready}, reps)
    data["kernel_ready"] = ready
    return [
        ("python3 kernel start → ready", ms(median(ready["python3"])), "ms"),
        ("Elelem kernel start → ready", ms(median(ready["elelem"])), "ms"),
        ("Elelem ÷ python3", paired(ready["elelem"], ready["python3"]), "×"),
    ]
