"""The `elelem.undoable` comm: which turns the kernel would undo, and undo without a cell.

A notebook's records come from whoever wrote the file, so the extension cannot tell from a
record alone whether `/undo` would act on it: only the kernel holds the person's secret
(store/signature.py). Before it draws an **Undo this turn** button, the extension opens this
comm with the candidate records,

    {"v": 1, "records": [{"turn": ..., "conversation": ..., "changes": [...], "signature": ...}]}

and the kernel answers `{"undoable": [turn ids whose signature verifies]}`. The button then
opens it with `{"v": 1, "op": "undo", "turn": ..., "cell": the turn's cell id}` and the
notebook's records as `elelem.restore` carries them (so a fresh kernel restores the
conversation first): the kernel runs `/undo` for exactly that turn (reaching the open
notebook's cells through the turn's cell) and answers `{"text": what /undo says}`. Either way the kernel closes the comm. A
kernel without elelem loaded has no such target and closes the comm unanswered: no button,
since no `/undo` would run there either. The messages both ways:
`comm_schemas/elelem.undoable.json` (labextension/src/protocol.ts's types).
"""

from __future__ import annotations

from typing import Any

from elelem_kernel.jupyter import restore_comm

TARGET = "elelem.undoable"
#: At most this many records are checked per request.
MAX_RECORDS = 50


def register(ip: Any) -> None:
    """Register the comm target on shell `ip`'s kernel (nothing outside a kernel)."""
    manager = getattr(getattr(ip, "kernel", None), "comm_manager", None)
    if manager is not None:
        manager.register_target(TARGET, lambda comm, msg: _opened(ip, comm, msg))


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


def _opened(ip: Any, comm: Any, msg: dict[str, Any]) -> None:
    data = (msg.get("content") or {}).get("data")
    try:
        if isinstance(data, dict) and data.get("op") == "undo":
            comm.send({"text": _undo(ip, data)})
        else:
            comm.send({"undoable": undoable(data)})
    finally:
        comm.close()


def _undo(ip: Any, data: dict[str, Any]) -> str:
    from elelem_kernel.jupyter.shell_front import front_for  # lazy: the agent, only to undo

    turn, cell = data.get("turn"), data.get("cell")
    if not isinstance(turn, str):
        return "Not undone: the request named no turn."
    if "notebook" in data:  # the open notebook's records, as `elelem.restore` sends them
        restore_comm.receive(ip.user_ns, data)
    try:
        return front_for(ip).undo(turn=turn, cell=cell if isinstance(cell, str) else None)
    except Exception as error:  # the button must hear why, not wait
        return f"Not undone: {error}"
