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
from typing import Any

TARGET = "elelem.frozen"
MAX_CELLS = 200  #: cells answered for in one request


def register(ip: Any, session: Callable[[], Any]) -> None:
    """Register the comm target on shell `ip`'s kernel (nothing outside a kernel);
    `session()` is the shell's session, or None before its first turn."""
    manager = getattr(getattr(ip, "kernel", None), "comm_manager", None)
    if manager is not None:
        manager.register_target(TARGET, lambda comm, msg: _opened(session(), comm, msg))


def outputs(session: Any, cells: Any) -> dict[str, dict[str, Any]]:
    """The frozen output of each of `cells` (ids) whose turn `session` holds."""
    if session is None or not isinstance(cells, list):
        return {}
    wanted = {c for c in cells[:MAX_CELLS] if isinstance(c, str)}
    found: dict[str, dict[str, Any]] = {}
    if not wanted:
        return found
    from elelem_kernel.render.static import bundle  # lazy: only a page that asks needs it

    for conversation in getattr(session, "conversations", {}).values():
        for record in conversation.turns:
            cell = record.get("cell")
            if cell in wanted:
                data, metadata = bundle(record)
                found[cell] = {"data": data, "metadata": metadata}
    return found


def _opened(session: Any, comm: Any, msg: dict[str, Any]) -> None:
    data = (msg.get("content") or {}).get("data") or {}
    try:
        comm.send({"outputs": outputs(session, data.get("cells"))})
    finally:
        comm.close()
