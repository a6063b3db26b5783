"""Each MCP server's tool list, kept between sessions so a turn need not start the server.

A CLI turn is a new process: without this, every `ask` started every configured server
just to learn its tools (seconds with a few servers). The list a server gave is stored
under the person's cache folder (`$XDG_CACHE_HOME/elelem-kernel/mcp-tools`, else
`~/.cache/...`; folder 0700, files 0600), in a file named by a hash of the server's
configuration: a changed command, argument, variable or URL is another file, so a stale
list is never used for a changed server. The next session offers the tools at once and
starts the server when one of them is called; the list is written again whenever the
server lists its tools (at start, and when it says they changed).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.mcp.config import ServerConfig

if TYPE_CHECKING:
    from mcp.types import Tool as RemoteTool

#: Bytes of a cached list read at most (a server may have MAX_TOOLS big schemas).
MAX_BYTES = 4_000_000


def folder(environ: dict[str, str] | None = None) -> Path:
    """Where the lists are kept."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "elelem-kernel" / "mcp-tools"


def key(config: ServerConfig) -> str:
    """A hash of everything that makes the server what it is (not where it was configured
    or how it is shown)."""
    fields = dataclasses.asdict(config)
    for name in ("source", "shown", "timeout", "disabled", "skipped"):
        fields.pop(name, None)
    text = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def load(config: ServerConfig) -> list[RemoteTool] | None:
    """The SDK's Tool objects the server listed last time, or None (none kept, unreadable)."""
    path = folder() / f"{key(config)}.json"
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        from mcp.types import Tool

        return [Tool.model_validate(item) for item in data["tools"]]
    except Exception:  # missing, unreadable, or written by another SDK version
        return None


def save(config: ServerConfig, tools: list[RemoteTool]) -> None:
    """Keep `tools` (the SDK's Tool objects) for `config`; failures are ignored (a cache)."""
    where = folder()
    try:
        for made in (where.parent, where):  # ours, both: a listing says what servers ran
            made.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(made, 0o700)
        items = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
        path = where / f"{key(config)}.json"
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"server": config.name, "tools": items}, f)
        os.replace(partial, path)
    except (OSError, TypeError, ValueError):
        pass
