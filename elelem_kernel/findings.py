"""The vocabulary of review findings, shared by the review and the views that show them.

A leaf like `events.py`: the review (which produces findings) and render/ (which shows the
findings a turn record carries) both read the severity order and the location format here.
"""

from __future__ import annotations

#: Severities, worst first.
SEVERITIES = ("blocker", "major", "minor", "nit")


def rank(severity: str | None) -> int:
    """0 for blocker … 3 for nit; unknown severities rank below nit."""
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)


def location(path: str, line: int | None = None, cell_id: str | None = None) -> str:
    """`path:line`, or `path cell ID line N` for a line of a notebook cell."""
    where = path
    if cell_id:
        where += f" cell {cell_id}"
        if line:
            where += f" line {line}"
    elif line:
        where += f":{line}"
    return where
