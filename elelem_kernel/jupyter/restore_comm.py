"""The `elelem.restore` comm: the open notebook hands its conversation to the kernel.

The JupyterLab / Notebook 7 extension (`labextension/`) opens this comm after a kernel
start or restart, or as the page loads on a running kernel (when the notebook has records
or a cell names elelem), before and after an elelem cell until the kernel has answered,
and before a `/load` cell with no path. Its data:

    {"v": 1, "reason": "start" | "cell" | "load",
     "path": "folder/analysis.ipynb",   # relative to the server root
     "root": "/home/me/work",           # the server root ("" or missing when unknown)
     "features": ["notebook"],          # what the extension offers (notebook_comm.py)
     "notebook": {"cells": [{"id": ..., "outputs": [{"metadata": {"elelem": record}}]}]}}

`receive` keeps the cells in `user_ns[restore.FRONTEND_KEY]`; the next restore uses them
instead of the file (restore.restore_into), through the same validation and warnings. The
kernel answers `{"received": number of cells}` and closes the comm, which tells the
extension not to send again. Registering the target imports nothing heavy. The messages
both ways are `comm_schemas/elelem.restore.json` (labextension/src/protocol.ts's types).

A restore also says a page with the extension is there: the kernel then links it for the
turns to come (`linked`): the standing `elelem.notebook` comm (jupyter/notebook_comm.py)
and, in the background, the imports of a first turn (jupyter/warm_up.py) and then the
standing widget (jupyter/standing_widget.py) and the first turn's frame of the live view
(render/view_frame.py).
"""

from __future__ import annotations

import functools
from pathlib import PurePosixPath
from typing import Any

TARGET = "elelem.restore"


def register(ip: Any) -> None:
    """Register the comm target on shell `ip`'s kernel (nothing outside a kernel)."""
    manager = getattr(getattr(ip, "kernel", None), "comm_manager", None)
    if manager is not None:
        manager.register_target(TARGET, lambda comm, msg: _opened(ip, comm, msg))


def receive(user_ns: dict[str, Any], data: Any) -> int:
    """Keep what the frontend sent for the next restore; the number of cells it holds."""
    # lazy: these load the agent; registering the comm must not
    from elelem_kernel.jupyter import restore
    from elelem_kernel.store import notebook

    data = data if isinstance(data, dict) else {}
    relative = data.get("path") if isinstance(data.get("path"), str) else ""
    name = PurePosixPath(relative).name or "the open notebook"
    cells, warnings = notebook.cells_of(data.get("notebook"), name)
    user_ns[restore.FRONTEND_KEY] = {
        "path": notebook_path(relative, data.get("root")),
        "name": name,
        "cells": cells,
        "warnings": warnings,
        "features": [f for f in data.get("features") or [] if isinstance(f, str)][:20]
        if isinstance(data.get("features"), list)
        else [],
    }
    return len(cells)


def notebook_path(relative: str, root: Any) -> str | None:
    """The notebook's absolute path as the server sees it, or None when it cannot be told."""
    from pathlib import Path

    if not relative or not isinstance(root, str) or not root.strip():
        return None
    path = Path(root).expanduser() / relative
    if not path.is_absolute() or ".." in path.parts:
        return None
    return str(path)


def linked(features: list[str]) -> None:
    """Ready the kernel for the turns of the page that sent a restore with `features`: the
    first turn's imports on a background thread, then what `ready_for_turns` readies
    (once: a page that loads asks the kernel for its open widgets); if it offers the open
    notebook (it runs comm messages on subshells), the standing notebook comm (anew: the
    page has just loaded)."""
    # lazy: small, only with a page
    from elelem_kernel.jupyter import notebook_comm, warm_up

    subshells = notebook_comm.FEATURE in features
    warm_up.start(then=functools.partial(ready_for_turns, subshells))
    if subshells:
        notebook_comm.stand()


def ready_for_turns(subshells: bool) -> None:
    """What a linked page gets before its first turn: the standing widget, when the page
    keeps a comm subshell per target (`subshells`), and the first turn's frame; then the
    windows of the local model servers it could use (`servers_ahead`)."""
    # lazy: the warm-up imported what these import (ipywidgets, httpx)
    from elelem_kernel.assembly import servers_ahead
    from elelem_kernel.jupyter import standing_widget
    from elelem_kernel.render import view_frame

    if subshells:
        standing_widget.stand()
    view_frame.make_ahead()
    servers_ahead.ask_windows()


def _opened(ip: Any, comm: Any, msg: dict[str, Any]) -> None:
    try:
        data = (msg.get("content") or {}).get("data")
        count = receive(ip.user_ns, data)
        comm.send({"received": count})
    finally:
        comm.close()
    from elelem_kernel.jupyter import restore  # lazy: receive imported it already

    frontend = ip.user_ns.get(restore.FRONTEND_KEY) or {}
    try:
        linked(list(frontend.get("features") or []))
    except Exception:  # the turns link the page themselves, as without it
        pass
