"""What a turn record kept in a notebook is: its versions, its size limit, its JSON Schema.

The agent writes records in this format (agent/record.py) and the store reads them back
(store/rebuild.py); both take the facts from here, so a reader never knows more versions
than the writer. The schema is `record.schema.json`, next to this module.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

#: Record format version this code writes (and store/rebuild.py reads).
VERSION = 1
#: Records above this (estimated serialized size) are skipped, not restored. The session
#: cuts every record it makes to fit (`agent.record.fit`), so only foreign or edited records
#: hit it.
MAX_RECORD_BYTES = 4_000_000
#: Records that carry a compaction are version 2 (older readers skip them, saying so).
COMPACTION_VERSION = 2
#: Newest version written, and every version restored (older ones are migrated on read).
NEWEST = COMPACTION_VERSION
VERSIONS = (VERSION, COMPACTION_VERSION)


@cache
def schema() -> dict[str, Any]:
    """The record's JSON Schema (draft 2020-12), `record.schema.json`."""
    from importlib import resources  # only a restore needs it: a CLI turn stays lean

    text = resources.files("elelem_kernel.store").joinpath("record.schema.json").read_text("utf-8")
    return dict(json.loads(text))


def larger_than(value: Any, limit: int) -> bool:
    """Whether the estimated JSON size of `value` passes `limit` (stops as soon as it does)."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2
            for key, inner in item.items():
                size += len(str(key)) + 4
                stack.append(inner)
        elif isinstance(item, (list, tuple)):
            size += 2
            stack.extend(item)
        else:
            size += 8
        if size > limit:
            return True
    return False
