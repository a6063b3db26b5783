"""The Elelem kernel reads its notebook file while it starts; the first restore takes it if unchanged.

The first prompt restores the notebook's conversations (jupyter/restore.py). For a notebook
of 100 turns, reading the file, checking its shape and every record and rebuilding the
conversations was ~10 ms of a first turn's ~80 ms. The Elelem kernel knows its notebook
file when it starts (`ELELEM_NOTEBOOK`, or Jupyter Server's `JPY_SESSION_NAME`), and a
person takes seconds to type the first prompt: `start` reads and rebuilds it then, and the
first restore `take`s that, only if the file is still the same (its size, modification
time and inode) and only once. Anything else reads the file anew.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from elelem_kernel.store.ipynb_records import NotebookCell
    from elelem_kernel.store.rebuild import Rebuilt


class Read(NamedTuple):
    """A notebook file's cells, what reading them said, and the conversations they hold."""

    cells: list[NotebookCell]
    warnings: list[str]
    rebuilt: Rebuilt


#: Larger files are left to the first restore: in JupyterLab the page sends the cells
#: itself and what was read goes unused, and parsing a big file at start (the GIL held
#: through `json.loads`) would slow the kernel the page is linking.
LIMIT = 8 * 1024 * 1024

_lock = threading.Lock()
_thread: threading.Thread | None = None
_read: tuple[Path, tuple[int, int, int], Read] | None = None
_wanted = True  #: False once a restore took its cells elsewhere (the page sent them)


def start(find: Callable[[], Path | None]) -> threading.Thread | None:
    """On a daemon thread, `find` the notebook file (as the first restore will) and read
    its cells; once per process; that thread (None after)."""
    global _thread
    with _lock:
        if _thread is not None:
            return None
        _thread = threading.Thread(
            target=_read_ahead, args=(find,), name="elelem-restore-ahead", daemon=True
        )
    _thread.start()
    return _thread


def take(path: Path) -> Read | None:
    """What `start` read of `path`, if the file has not changed since; None otherwise.

    Waits for the read when it is still going (the turn would read the file itself for as
    long); gives it up either way, so later restores read the file as it is then."""
    global _read
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()
    with _lock:
        found, _read = _read, None
    if found is None or found[0] != path or found[1] != _key(path):
        return None
    return found[2]


def drop() -> None:
    """Forget what was or is being read: the first restore took its cells from the page."""
    global _read, _wanted
    with _lock:
        _read, _wanted = None, False


def _read_ahead(find: Callable[[], Path | None]) -> None:
    global _read
    try:  # imported here: the thread's work, not the kernel's start
        from elelem_kernel.store import notebook

        path = find()
        key = None if path is None else _key(path)
        if path is None or key is None or key[0] > LIMIT:
            return
        cells, warnings = notebook.read_notebook(path)
        read = Read(cells, warnings, notebook.restore_cells(cells, warnings))
    except Exception:  # the first prompt reads it itself, and says what went wrong
        return
    with _lock:
        if _wanted:
            _read = (path, key, read)


def _key(path: Path) -> tuple[int, int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns, status.st_ino
