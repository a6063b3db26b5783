"""A stdio MCP server's stderr, kept in a private, bounded log with its secrets redacted.

The server writes into a pipe; a thread reads it line by line and writes each line to the
log after `redact` replaced the values of the server's configured `env` and `headers`
(a server printing its token keeps it out of the file). The file is created `0600`
(its folder, made by the hub, is `0700`) and holds at most `MAX_BYTES`: past that it
moves to `NAME.log.1`, replacing the older part, so a server writing 200 MB leaves at
most twice `MAX_BYTES`. A line longer than `MAX_LINE` is cut into pieces, so memory stays
bounded too.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from pathlib import Path
from typing import IO

from elelem_kernel.redaction import forms_of, redact

MAX_BYTES = 1_000_000  #: bytes of one log file before it moves to `.1`
MAX_LINE = 64_000  #: bytes of a line without a newline before it is written as is
JOIN_TIMEOUT = 2.0  #: seconds `close` waits for the last lines of a stopped server


class StderrLog:
    """The pipe a server's stderr goes to, and the thread that writes it to `path`."""

    def __init__(self, path: Path, secrets: list[str]):
        self.path = path
        self.older = Path(f"{path}.1")
        self._forms = forms_of(secrets)
        self._file = _private(path)
        self._size = 0
        read, write = os.pipe()
        self.writer: IO[str] = os.fdopen(write, "w")  #: the server's stderr
        self._thread = threading.Thread(
            target=self._pump, args=(read,), daemon=True, name=f"elelem-mcp-log-{path.stem}"
        )
        self._thread.start()

    def close(self) -> None:
        """Close our end of the pipe and wait (briefly) for the server's last lines."""
        self.writer.close()
        self._thread.join(JOIN_TIMEOUT)

    def _pump(self, fd: int) -> None:
        pending = b""
        with os.fdopen(fd, "rb", buffering=0) as source, self._file:
            while chunk := source.read(65536):
                *lines, pending = (pending + chunk).split(b"\n")
                while len(pending) > MAX_LINE:
                    lines.append(pending[:MAX_LINE])
                    pending = pending[MAX_LINE:]
                for line in lines:
                    self._write(line)
            if pending:
                self._write(pending)

    def _write(self, line: bytes) -> None:
        text = redact(line.decode("utf-8", "replace"), self._forms)
        data = (text + "\n").encode("utf-8")
        if self._size + len(data) > MAX_BYTES and self._size:
            self._file.close()
            os.replace(self.path, self.older)
            self._file, self._size = _private(self.path), 0
        self._file.write(data)
        self._file.flush()
        self._size += len(data)


def _private(path: Path) -> IO[bytes]:
    """`path` opened for writing, new and readable by its owner only, never through a link."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    return os.fdopen(os.open(path, flags, 0o600), "wb")


def tail(path: Path, lines: int) -> list[str]:
    """The last `lines` lines of the log at `path` (its older part first), stripped."""
    kept: deque[str] = deque(maxlen=lines)
    for part in (Path(f"{path}.1"), path):
        try:
            with open(part, encoding="utf-8", errors="replace") as f:
                kept.extend(line.rstrip() for line in f)
        except OSError:
            continue
    return list(kept)
