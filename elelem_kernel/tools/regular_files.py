"""Only regular files are opened: a FIFO, a device or a socket is refused by name.

Opening a FIFO for reading waits for a writer, forever: one `read` of a named pipe in the
workspace hung the tool, and the turn with it. Every file tool that opens a file checks
here first, and opens without blocking (`O_NONBLOCK`) then checks the open file itself, so
a FIFO swapped in between the check and the open is refused too.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import BinaryIO

from elelem_kernel.errors import ToolError

_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def strange(mode: int) -> str | None:
    """What a file of this `st_mode` is when it is neither a regular file nor a folder."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def refusal(rel: str, kind: str) -> str:
    """The message for a file that is not regular, naming what it is."""
    return (
        f'"{rel}" is {kind}, not a regular file; the file tools only open regular files '
        "(reading it could wait forever). Inspect it with bash if you must."
    )


def check_regular(path: Path, rel: str) -> None:
    """`ToolError` when `path` exists and is a FIFO, a device or a socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    kind = strange(mode)
    if kind is not None:
        raise ToolError(refusal(rel, kind))


def open_regular(path: Path | str, rel: str) -> BinaryIO:
    """`open(path, "rb")` for a regular file; `ToolError` for anything else, never blocking."""
    check_regular(Path(path), rel)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ToolError(refusal(rel, strange(mode) or "a folder"))
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")
