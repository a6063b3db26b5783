"""The review prompt: the task, the diff (or one part of it), focus and severity threshold."""

from __future__ import annotations

import re
from pathlib import Path

from elelem_kernel.findings import SEVERITIES
from elelem_kernel.review.diff import Diff

INSTRUCTIONS = """\
You are reviewing code changes. Read the diff below, look at the surrounding code where
you need to (the `read` and `grep` tools, or `git show`, `git blame`, `git log` through
the `git` tool), and report every real problem with the `report_finding` tool: one call
per problem, with the file path as the diff names it, the line number in the new version
(for a notebook: the cell id and the line within that cell), a severity, a one-line
title, a body that says why it matters, and a suggestion (replacement code) when you have
one. Severities: blocker (must not be merged), major (a bug or a real risk), minor (worth
fixing), nit (style or taste). Look for bugs, unhandled edge cases, security problems,
data loss, misleading names or docs, and missing tests; do not report what is fine.
You cannot change files in this review. When done, answer with a short summary."""


def build(
    diff: Diff,
    part: int = 0,
    focus: str | None = None,
    severity: str | None = None,
    workspace: Path | None = None,
) -> str:
    """The prompt for part `part` of `diff`; `workspace` is where the file tools start."""
    target = diff.target
    lines = [INSTRUCTIONS, "", f"Target: {target.label}. The diff: `{target.command()}`."]
    if target.untracked:
        lines.append("Untracked new files are included below as added files.")
    lines.append(f"Paths are relative to the repository root {target.root}.")
    inside = _inside(target.root, workspace)
    if inside:
        lines.append(
            f"Your file tools start in {inside}/ inside the repository: give them paths relative "
            f"to it (the git tool and report_finding take repository paths)."
        )
    if len(diff.parts) > 1:
        lines.append(
            f"This is part {part + 1} of {len(diff.parts)} of a large diff; review only the files shown here."
        )
    if focus:
        lines.append(f"Focus on: {focus}")
    if severity and severity in SEVERITIES:
        allowed = ", ".join(SEVERITIES[: SEVERITIES.index(severity) + 1])
        lines.append(f"Report only findings of severity {severity} or worse ({allowed}).")
    if diff.skipped:
        lines.append("")
        lines.append("Not pasted here (mention them in your summary only if something stands out):")
        lines += [f"- {s['path']}: {s['reason']}" for s in diff.skipped]
    text = diff.part_text(part).rstrip("\n")
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    lines += ["", f"{fence}diff", text, fence]
    return "\n".join(lines) + "\n"


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def _inside(root: Path, workspace: Path | None) -> str | None:
    """The workspace's folder inside the repository, when it is not the root itself."""
    if workspace is None:
        return None
    try:
        sub = Path(workspace).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
    return None if sub == "." else sub
