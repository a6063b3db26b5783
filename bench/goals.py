"""The goals of issues 15, 36 and 39, each read from the benchmarks' rows: figure, now, goal, met.

A goal names the benchmark and the row label (the table's first column) that carries its
figure, and the most the figure may be. Where the same run measures a floor for the figure
(what any client of this design must spend, in the same unit), the goal names that row
too, and a goal under its floor says so. Figures whose benchmark did not run (`--only`)
show as "not run", those of a benchmark that failed as "failed"; `python -m bench` prints
this table last (not after `--smoke`, whose figures mean nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Goal:
    """One figure of issue 15's or 39's table and the most it may be."""

    figure: str
    benchmark: str
    row: str
    most: float
    unit: str
    floor: str | None = None  #: the row of the same benchmark with the figure's floor


GOALS = (
    Goal(
        "server's first byte → first reply text on iopub (live view)",
        "streaming",
        "(c) server first byte → first reply text",
        30,
        "ms",
    ),
    Goal(
        "server's last byte → idle (last refresh + freeze), 2,000-word reply",
        "streaming",
        "(c) server's last byte → idle",
        30,
        "ms",
        floor="(c floor) server's last byte → idle, a cell reading the stream itself",
    ),
    Goal(
        "  of which after the stream is read: turn end on iopub → idle",
        "streaming",
        "(c) turn end on iopub → idle",
        30,
        "ms",
    ),
    Goal(
        "%%elelem cell, live view ÷ in-process httpx floor",
        "streaming",
        "(c) ÷ (a)",
        1.5,
        "×",
        floor="(a3) async read + SSE + JSON ÷ (a)",
    ),
    Goal(
        "%%elelem cell vs %%ai default (stream: false), instant server, wall",
        "jupyter_ai",
        "ours ÷ %%ai, default (stream: false), wall",
        3,
        "×",
        floor="  ÷ %%ai, default (stream: false), wall",
    ),
    Goal(
        "elelem-kernel ask process ÷ a fresh python + httpx drain",
        "streaming",
        "(b) ÷ (a')",
        1.5,
        "×",
    ),
    Goal(
        "first %%elelem turn in a fresh kernel, over a later turn",
        "streaming",
        "(c) first turn − a later turn",
        500,
        "ms",
    ),
    Goal(
        "list tool ÷ git ls-files, 20,000 files",
        "tools",
        "list ÷ git ls-files",
        1.5,
        "×",
        floor="  ÷ git ls-files (the repository's config read, then ls-files -c -o)",
    ),
    Goal(
        "grep tool (ripgrep engine) ÷ rg -n, 20,000 files",
        "tools",
        "grep ÷ rg",
        1.5,
        "×",
        floor="  ÷ rg (git's list, then rg over it)",
    ),
    Goal(
        "elelem-kernel ask -p echo ÷ python -c 'import httpx' (issue 39)",
        "startup",
        "ask -p echo ÷ import httpx",
        1.3,
        "×",
    ),
    Goal(
        "first turn in a kernel restoring 100 turns ÷ in an empty one (issue 39)",
        "startup",
        "first turn restoring the notebook ÷ empty",
        1.2,
        "×",
    ),
    Goal(
        "ACP agent's first token (SDK client) ÷ elelem-kernel ask (issue 39)",
        "acp_first_token",
        "acp first token ÷ ask",
        1.5,
        "×",
    ),
    Goal("restore 1,000 turns ÷ nbformat.read", "notebook", "restore ÷ nbformat.read", 1.2, "×"),
    Goal(
        "append_turn, last tenth ÷ first tenth of 200 turns",
        "notebook",
        "append_turn, last tenth ÷ first tenth",
        2,
        "×",
    ),
    Goal(
        "open notebook: first turn's diff box ÷ a warm turn's",
        "open_notebook",
        "first ÷ warm",
        1.2,
        "×",
    ),
    Goal(
        "open notebook: warm notebook_edit call → diff box on screen",
        "open_notebook",
        "warm notebook_edit call → diff box",
        150,
        "ms",
    ),
    Goal(
        "open notebook: notebook_run of a cell ÷ the person running it",
        "open_notebook",
        "notebook_run ÷ person",
        1.2,
        "×",
    ),
)


def figure(results: list[dict[str, Any]], benchmark: str, row: str) -> float | None:
    """The figure of `row` in `benchmark`'s results, or None when it did not give it."""
    for r in results:
        if r.get("name") != benchmark:
            continue
        for label, value, _unit in r.get("rows", []):
            if label == row and isinstance(value, (int, float)) and not math.isnan(value):
                return float(value)
    return None


def check(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every goal with its figure now, its floor, and whether it is met (None: not measured)."""
    out = []
    for goal in GOALS:
        now = figure(results, goal.benchmark, goal.row)
        floor = figure(results, goal.benchmark, goal.floor) if goal.floor else None
        met = None if now is None else now <= goal.most
        failed = now is None and any(
            r.get("name") == goal.benchmark and r.get("error") for r in results
        )
        out.append({"figure": goal.figure, "now": now, "goal": goal.most, "unit": goal.unit})
        out[-1].update(floor=floor, met=met, failed=failed)
    return out


def table(checked: list[dict[str, Any]]) -> str:
    """The goals as plain text: figure, now, goal, met / NOT met / not run."""
    width = max(len(c["figure"]) for c in checked)
    lines = ["\nGoals of issues 15, 36 and 39 (median of the repetitions)"]
    for c in checked:
        now = "—" if c["now"] is None else f"{c['now']:g} {c['unit']}"
        verdict = {True: "met", False: "NOT met", None: "not run"}[c["met"]]
        if c.get("failed"):
            verdict = "failed (its benchmark failed)"
        floor = c.get("floor")
        if c["met"] is False and floor is not None and floor > c["goal"]:
            verdict += f" (the goal is under this run's floor, {floor:g} {c['unit']})"
        goal = f"≤ {c['goal']:g} {c['unit']}"
        lines.append(f"  {c['figure'].ljust(width)}  {now:>12}  {goal:>10}  {verdict}")
    met = sum(1 for c in checked if c["met"])
    measured = sum(1 for c in checked if c["met"] is not None)
    lines.append(f"  {met} of {measured} measured goals met ({len(checked)} goals)")
    return "\n".join(lines)
