"""`python -m bench [--only NAME ...] [--quick]`: run the benchmarks, print a table,
write bench/results.json."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from bench import goals

BENCHMARKS = {
    "streaming": "bench.streaming",
    "jupyter_ai": "bench.jupyter_ai",
    "load": "bench.load",
    "prefix": "bench.prefix",
    "notebook": "bench.notebook_memory",
    "tools": "bench.tools_scale",
    "long_session": "bench.long_session",
    "images": "bench.images",
}
RESULTS = Path(__file__).with_name("results.json")


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


def run_one(name: str, quick: bool) -> dict:
    start = time.perf_counter()
    try:
        module = importlib.import_module(BENCHMARKS[name])
        out = module.run(quick=quick)
    except Exception as error:  # one broken benchmark must not hide the others
        out = {"name": name, "title": name, "rows": [], "data": {}}
        out["error"] = f"{type(error).__name__}: {error}"
        out["traceback"] = traceback.format_exc()
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--only", action="append", choices=list(BENCHMARKS), help="run only NAME (repeatable)"
    )
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, smaller sizes")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args(argv)
    names = args.only or list(BENCHMARKS)
    start = time.perf_counter()
    results = []
    for name in names:
        print(f"running {name}...", file=sys.stderr, flush=True)
        results.append(run_one(name, args.quick))
        print(table(results[-1:]), flush=True)
    total = time.perf_counter() - start
    report = {"machine": machine(), "quick": args.quick, "seconds": round(total, 1)}
    report["results"] = results
    report["goals"] = goals.check(results)
    print(goals.table(report["goals"]), flush=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"\n{len(results)} benchmarks in {total:.0f} s on {report['machine']['cpus']} CPUs; "
        f"figures in {args.out}"
    )
    return 1 if any(r.get("error") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
