"""What a turn's tools add to its record: the changes that revert it, review findings.

A tool writes these into the session's `turn_extras` while the turn runs; the turn merges
them into its record (`agent/record.TurnRecord` has the same keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired


class Change(TypedDict):
    """One entry of the record's `changes` (`tools/changes.py`): a file written or a cell
    of the open notebook edited, with what reverts it (record.schema.json)."""

    kind: str  #: `file` or `cell`
    path: NotRequired[str]
    action: NotRequired[str]
    cell: NotRequired[str | None]
    index: NotRequired[int | None]
    before: NotRequired[str | None]
    after: NotRequired[str | None]
    created: NotRequired[bool]
    after_sha: NotRequired[str | None]
    cell_type: NotRequired[str]
    from_index: NotRequired[int]
    label: NotRequired[str]
    too_large: NotRequired[str]
    outputs: NotRequired[list[dict[str, object]]]
    execution_count: NotRequired[int | None]


class TurnExtras(TypedDict, total=False):
    """Fields the tools add to the turn's record."""

    changes: list[Change]
    findings: list[dict[str, object]]  #: review findings (`review/review_tools.py`)
    review: dict[str, object]  #: what a review looked at (`review/run.py`)
