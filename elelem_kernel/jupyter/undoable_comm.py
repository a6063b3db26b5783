"""The `elelem.undoable` comm: the extension asks which turns the kernel would undo.

A notebook's records come from whoever wrote the file, so the extension cannot tell from a
record alone whether `/undo` would act on it: only the kernel holds the person's secret
(store/signature.py). Before it draws an **Undo this turn** button, the extension opens this
comm with the candidate records,

    {"v": 1, "records": [{"turn": ..., "conversation": ..., "changes": [...], "signature": ...}]}

and the kernel answers `{"undoable": [turn ids whose signature verifies]}` and closes the
comm. A kernel without elelem loaded has no such target and closes the comm unanswered: no
button, since no `/undo` would run there either.
"""

from __future__ import annotations

from typing import Any

TARGET = "elelem.undoable"
#: At most this many records are checked per request.
MAX_RECORDS = 50


def register(ip: Any) -> None:
    """Register the comm target on shell `ip`'s kernel (nothing outside a kernel)."""
    manager = getattr(getattr(ip, "kernel", None), "comm_manager", None)
    if manager is not None:
        manager.register_target(TARGET, _opened)


def undoable(data: Any) -> list[str]:
    """The turn ids, among the records in `data`, that this person's sessions signed."""
    from elelem_kernel.store import signature  # lazy: registering the comm loads nothing

    records = data.get("records") if isinstance(data, dict) else None
    if not isinstance(records, list):
        return []
    found = []
    for record in records[:MAX_RECORDS]:
        if isinstance(record, dict) and isinstance(record.get("turn"), str):
            if record.get("changes") and signature.verified(record):
                found.append(record["turn"])
    return found


def _opened(comm: Any, msg: dict[str, Any]) -> None:
    try:
        comm.send({"undoable": undoable((msg.get("content") or {}).get("data"))})
    finally:
        comm.close()
