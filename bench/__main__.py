"""`python -m bench [--only NAME ...] [--quick | --smoke]`: run the benchmarks, print a
table, write bench/results.json.

A benchmark is any module of this folder with a top-level `run` function; its `NAME` is
the name `--only` takes (the file's name without one): adding a file is enough. `run(quick=..., smoke=...)` returns
`common.result(...)`; `smoke` means every part end to end on tiny sizes, one repetition.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import os
import platform
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from bench import goals

HERE = Path(__file__).parent
RESULTS = HERE / "results.json"
#: The order of the first benchmarks (their tables are numbered so); others follow by name.
ORDER = ("streaming", "jupyter_ai", "load", "prefix", "notebook", "tools", "long_session")


def discover(folder: Path = HERE) -> dict[str, str]:
    """Benchmark name → module, for each module of `folder` defining `run`, named by its
    `NAME` or else its file (read from the source, so listing them imports nothing)."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        name = None
        has_run = False
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "run":
                has_run = True
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if any(isinstance(t, ast.Name) and t.id == "NAME" for t in node.targets):
                    name = node.value.value
        if has_run and not path.stem.startswith("_"):
            found[name if isinstance(name, str) else path.stem] = f"{folder.name}.{path.stem}"
    first = [n for n in ORDER if n in found]
    return {n: found[n] for n in first + sorted(set(found) - set(first))}


BENCHMARKS = discover()


def machine() -> dict:
    """What the figures were measured on."""
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def table(results: list[dict]) -> str:
    """The results as a plain text table, one section per benchmark."""
    lines = []
    for r in results:
        lines.append(f"\n{r['title']}  [{r['seconds']:.0f} s]")
        if r.get("error"):
            lines.append(f"  FAILED: {r['error']}")
        width = max((len(str(row[0])) for row in r["rows"]), default=0)
        for label, value, unit in r["rows"]:
            lines.append(f"  {str(label).ljust(width)}  {value!s:>10}  {unit}")
    return "\n".join(lines)


def run_one(name: str, quick: bool, smoke: bool = False) -> dict:
    """Benchmark `name`'s result; a failure becomes a result whose row says "failed"."""
    start = time.perf_counter()
    try:
        module = importlib.import_module(BENCHMARKS[name])
        kwargs = {"quick": quick or smoke}
        if smoke and "smoke" in inspect.signature(module.run).parameters:
            kwargs["smoke"] = True
        out = module.run(**kwargs)
    except Exception as error:  # one broken benchmark must not hide the others
        message = f"{type(error).__name__}: {error}"
        out = {"name": name, "title": name, "rows": [["run", "failed", message[:200]]]}
        out.update(data={}, error=message, traceback=traceback.format_exc())
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--only", action="append", choices=list(BENCHMARKS), help="run only NAME (repeatable)"
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repetitions, smaller sizes")
    size.add_argument(
        "--smoke",
        action="store_true",
        help="every benchmark end to end on tiny sizes, once; no figure judged (for the tests)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args(argv)
    names = args.only or list(BENCHMARKS)
    start = time.perf_counter()
    results = []
    for name in names:
        print(f"running {name}...", file=sys.stderr, flush=True)
        results.append(run_one(name, args.quick, args.smoke))
        print(table(results[-1:]), flush=True)
    total = time.perf_counter() - start
    report = {"machine": machine(), "quick": args.quick, "smoke": args.smoke}
    report.update(seconds=round(total, 1), results=results)
    if args.smoke:
        print("\nsmoke run: tiny sizes, figures not judged", flush=True)
    else:
        report["goals"] = goals.check(results)
        print(goals.table(report["goals"]), flush=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    failed = [r["name"] for r in results if r.get("error")]
    print(
        f"\n{len(results)} benchmarks in {total:.0f} s on {report['machine']['cpus']} CPUs"
        f"{'; failed: ' + ', '.join(failed) if failed else ''}; figures in {args.out}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
