"""Review findings: one structured item per problem, their severities, order and location.

A leaf like `events.py`: the review (which produces findings, review/) and the views that
show the findings a turn record carries (render/findings_view.py) both read them here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from typing import Any

from elelem_kernel.errors import BadInput

#: Severities, worst first.
SEVERITIES = ("blocker", "major", "minor", "nit")
#: The formats a review's report is written in (review/report.py writes them; the command
#: line offers them without importing the writers).
FORMATS = ("markdown", "json", "sarif")


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


def at_least(severity: str, threshold: str) -> bool:
    """Whether `severity` is as bad as `threshold` or worse."""
    return rank(severity) <= rank(threshold)


def check_severity(value: str | None) -> str | None:
    """`value` lower-cased if it is a severity (or None); BadInput naming the choices."""
    if value is None:
        return None
    low = value.strip().lower()
    if low not in SEVERITIES:
        raise BadInput(f"unknown severity {value!r}: use one of {', '.join(SEVERITIES)}")
    return low


@dataclass
class Finding:
    """One problem the reviewer found, located by path and line (or notebook cell and line)."""

    path: str
    severity: str
    title: str
    body: str = ""
    line: int | None = None
    cell_id: str | None = None
    suggestion: str | None = None
    code: str | None = None  #: the reviewed line(s) at the location, captured when reported
    outside_diff: bool = False  #: the path is not among the files of the diff

    @property
    def location(self) -> str:
        return location(self.path, self.line, self.cell_id)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def sort(findings: Iterable[Finding]) -> list[Finding]:
    """Worst first, then by location."""
    return sorted(findings, key=lambda f: (rank(f.severity), f.path, f.cell_id or "", f.line or 0))


def worst(findings: Iterable[Finding]) -> str | None:
    """The worst severity among `findings`, or None when there are none."""
    ranked = sort(findings)
    return ranked[0].severity if ranked else None
