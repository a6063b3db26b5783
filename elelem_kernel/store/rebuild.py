"""Rebuild conversations from the turn records found in a notebook's cells.

Pure data in, data out: no Jupyter, no files, nothing executed. store/ipynb_records.py reads
the cells; this module decides which records count.

Rules:
- cells are walked top to bottom; a cell holds at most one turn, the last valid record of
  the cell (a re-run cell's newest output wins);
- a record must be version 1 or 2, match `record.schema.json` and stay under
  `MAX_RECORD_BYTES` (store/record_format.py); anything else is skipped, all skips summed up in one warning;
- migration: a version 1 record reads exactly as before version 2 existed (a `compaction`
  key in it is not one: it is dropped); version 2 adds the turn's compaction;
- two cells claiming the same turn id (a copied cell): the later cell keeps it, one warning;
- conversations are ordered by their first turn in the notebook; the active one is the
  conversation of the bottom-most restored turn (where the person left off: a `--new`
  conversation started at the bottom is both the last started and the bottom-most);
- a restored record keeps the notebook cell's id as its `cell`, so re-running that cell
  replaces its turn.

A record is data. Its prompt and reply go back to the model as the earlier user and
assistant messages, whatever they say; no field of a record becomes a system message or runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, cast

from elelem_kernel.schema_check import Check, checker
from elelem_kernel.store.record_format import (
    MAX_RECORD_BYTES,
    NEWEST,
    VERSIONS,
    TurnRecord,
    larger_than,
    schema,
)
from elelem_kernel.text import human_size, shorten

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

#: Skipped records named one by one in the warning; the rest are counted.
_NAMED = 3

#: One notebook cell: its id (None in old notebooks) and the record candidates of its outputs.
Cell = tuple[str | None, Sequence[object]]


@dataclass
class Rebuilt:
    """Conversations restored from a notebook, ready for `Session.load`."""

    conversations: dict[str, list[TurnRecord]] = field(default_factory=dict)
    active: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def turns(self) -> int:
        """How many turns were restored, in all conversations."""
        return sum(len(turns) for turns in self.conversations.values())


def rebuild(cells: Sequence[Cell], *, max_bytes: int = MAX_RECORD_BYTES) -> Rebuilt:
    """Walk `cells` (cell id, record candidates) in order and rebuild the conversations."""
    skipped: list[tuple[int, str]] = []
    kept: list[tuple[int, TurnRecord]] = []
    for position, (cell_id, candidates) in enumerate(cells, start=1):
        chosen = None
        for candidate in candidates:
            problem = check(candidate, max_bytes=max_bytes)
            if problem:
                skipped.append((position, problem))
            else:  # it fits record.schema.json (readers `.get` what a foreign one may lack)
                chosen = cast(TurnRecord, candidate)
        if chosen is not None:
            kept.append((position, _with_cell(migrate(chosen), cell_id)))

    turns, duplicates = _dedupe(kept)
    result = Rebuilt()
    for record in turns:
        result.conversations.setdefault(record["conversation"], []).append(record)
        result.active = record["conversation"]
    if skipped:
        result.warnings.append(_skipped_warning(skipped))
    if duplicates:
        result.warnings.append(_duplicates_warning(duplicates))
    return result


def check(record: object, *, max_bytes: int = MAX_RECORD_BYTES) -> str | None:
    """Why `record` cannot be restored, or None when it can."""
    if not isinstance(record, dict) or "v" not in record:
        return "not an elelem record"
    version = record["v"]
    if isinstance(version, int) and not isinstance(version, bool) and version > NEWEST:
        return f"written by a newer elelem-kernel (v{version}: upgrade to restore it)"
    if version not in VERSIONS or isinstance(version, bool):
        return f"unknown record version {shorten(repr(version), 40)}"
    if larger_than(record, max_bytes):
        return f"too large (over the {human_size(max_bytes, 'limit')} limit)"
    error = _schema_error(record)
    if error:
        return f"malformed ({error})"
    return None


def migrate(record: TurnRecord) -> TurnRecord:
    """`record` as this version reads it: v1 records as they always read (no compaction)."""
    if record.get("v") == 1 and "compaction" in record:
        record = record.copy()
        del record["compaction"]
    return record


def _with_cell(record: TurnRecord, cell_id: str | None) -> TurnRecord:
    if cell_id is None or record.get("cell") == cell_id:
        return record
    return {**record, "cell": cell_id}


def _dedupe(
    kept: list[tuple[int, TurnRecord]],
) -> tuple[list[TurnRecord], dict[str, list[int]]]:
    """Keep one cell per turn id, the later one; report the turns claimed more than once."""
    last: dict[str, int] = {}
    claims: dict[str, list[int]] = {}
    for position, record in kept:
        last[record["turn"]] = position
        claims.setdefault(record["turn"], []).append(position)
    turns = [record for position, record in kept if last[record["turn"]] == position]
    duplicates = {turn: cells for turn, cells in claims.items() if len(cells) > 1}
    return turns, duplicates


def _skipped_warning(skipped: list[tuple[int, str]]) -> str:
    named = "; ".join(f"cell {position}: {problem}" for position, problem in skipped[:_NAMED])
    more = f"; and {len(skipped) - _NAMED} more" if len(skipped) > _NAMED else ""
    noun = "record" if len(skipped) == 1 else "records"
    return f"skipped {len(skipped)} {noun} that could not be restored: {named}{more}"


def _duplicates_warning(duplicates: dict[str, list[int]]) -> str:
    parts = [
        f"turn {shorten(turn, 16)} in cells {', '.join(map(str, cells))}"
        for turn, cells in list(duplicates.items())[:_NAMED]
    ]
    more = f"; and {len(duplicates) - _NAMED} more" if len(duplicates) > _NAMED else ""
    return (
        f"{'a turn is' if len(duplicates) == 1 else 'turns are'} claimed by more than one cell "
        f"(copied cells?), kept the later cell: {'; '.join(parts)}{more}"
    )


@cache
def _fits_schema() -> Check:
    return checker(schema())


@cache
def _validator() -> Draft202012Validator:
    import jsonschema  # only for a record the quick check refuses: the error and its words

    return jsonschema.Draft202012Validator(schema())


def _schema_error(record: object) -> str | None:
    if _fits_schema()(record):  # the usual case: a quick check, no jsonschema import
        return None
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator().iter_errors(record))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "record"
    return f"{where}: {shorten(error.message, 80)}"
