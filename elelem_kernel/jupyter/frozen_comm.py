"""The `elelem.frozen` comm: a page shows the frozen output of a turn it saw only live.

A page that was reloaded, or closed and opened again, while a turn ran shows that turn as
last saved: a live view whose widgets die with the turn ("Error displaying widget: model
not found"), and it never gets the `update_display_data` that froze it, which went to the
page that ran the cell. Once the kernel is idle, the extension (labextension/src/
elsewhere.ts) opens this comm naming the cells that still show a live view:

    frontend → kernel  {"v": 1, "cells": ["cell id", ...]}   (comm_open)
    kernel → frontend  {"outputs": {"cell id": {"data": {...}, "metadata": {...}}}}

For each cell whose turn the session holds, the answer carries that turn's frozen output
(render/static.py), which the page puts in place of the dead live view; then the kernel
closes the comm. Registering the target imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

if TYPE_CHECKING:
    from elelem_kernel.agent.session import Session
    from elelem_kernel.store.record_format import TurnRecord

TARGET = "elelem.frozen"


class Comm(Protocol):
    """What the answer needs of the comm the page opened."""

    def send(self, data: dict[str, dict[str, FrozenOutput]]) -> None: ...

    def close(self) -> None: ...


class FrozenOutput(TypedDict):
    """A turn's frozen output, as a display_data's data and metadata."""

    data: dict[str, str]
    metadata: dict[str, TurnRecord]


MAX_CELLS = 200  #: cells answered for in one request


def register(ip: Any, session: Callable[[], Session | None]) -> None:
    """Register the comm target on shell `ip`'s kernel (nothing outside a kernel);
    `session()` is the shell's session, or None before its first turn."""
    manager = getattr(getattr(ip, "kernel", None), "comm_manager", None)
    if manager is not None:
        manager.register_target(TARGET, lambda comm, msg: _opened(session(), comm, msg))


def outputs(session: Session | None, cells: object) -> dict[str, FrozenOutput]:
    """The frozen output of each of `cells` (ids) whose turn `session` holds."""
    if session is None or not isinstance(cells, list):
        return {}
    wanted = {c for c in cells[:MAX_CELLS] if isinstance(c, str)}
    found: dict[str, FrozenOutput] = {}
    if not wanted:
        return found
    from elelem_kernel.render.static import bundle  # lazy: only a page that asks needs it

    for conversation in session.conversations.by_id.values():
        for record in conversation.turns:
            cell = record.get("cell")
            if cell in wanted:
                data, metadata = bundle(record)
                found[cell] = FrozenOutput(data=data, metadata=metadata)
    return found


def _opened(session: Session | None, comm: Comm, msg: dict[str, object]) -> None:
    content = msg.get("content")
    data = content.get("data") if isinstance(content, dict) else None
    if not isinstance(data, dict):
        data = {}
    try:
        comm.send({"outputs": outputs(session, data.get("cells"))})
    finally:
        comm.close()
