"""Places in the workspace the file tools treat with care, because they can run code.

- Anything inside a `.git` folder (or a `.git` file) is refused to every write: a
  repository's config names programs git runs (`core.fsmonitor`, hooks, drivers), so a
  write there is command execution on the next git call.
- Plugin and MCP config locations (a `.agents` folder anywhere in the workspace, a
  `.mcp.json` file) run code when elelem starts in that folder: a write there is asked
  every time, in every mode but `auto` (see `Session` approvals), whatever was allowed
  before.

Names are compared case-insensitively, as on the file systems of macOS and Windows, and
both the path as given and the path it resolves to (through symlinks) are checked.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.workspace import Workspace

#: The why an approval preview gives for a plugin or MCP config.
STARTUP_CODE = "this file can run code when elelem starts: a plugin / MCP config"


def _parts(ws: Workspace, path: str | os.PathLike[str] | None) -> list[tuple[str, ...]]:
    """The lowercased components of `path` below the root: as given, and as resolved."""
    text = os.fspath(path) if path not in (None, "") else "."
    given = Path(text).expanduser()
    lexical = Path(os.path.normpath(given if given.is_absolute() else ws.root / given))
    found = [lexical]
    try:
        found.append(ws.resolve(text))
    except ToolError:
        pass
    out = []
    for full in found:
        try:
            rel = full.relative_to(ws.root)
        except ValueError:
            continue
        out.append(tuple(p.lower().rstrip(". ") for p in PurePosixPath(rel.as_posix()).parts))
    return out


def check_writable(ws: Workspace, path: str | os.PathLike[str], target: Path) -> None:
    """Raise `ToolError` when `path` (resolved to `target`) is inside a `.git` folder."""
    candidates = _parts(ws, path) + _parts(ws, target)
    if any(".git" in parts for parts in candidates):
        raise ToolError(
            f'"{path}" is inside a .git folder (or is one): the file tools never write there, '
            "because git runs programs named in a repository's config and hooks. Change "
            "repository settings yourself, outside the agent."
        )


def startup_code(ws: Workspace, path: str | os.PathLike[str] | None) -> str | None:
    """Why writing `path` needs a person's yes every time, or None for an ordinary file."""
    for parts in _parts(ws, path):
        if ".agents" in parts or (parts and parts[-1] == ".mcp.json"):
            return f"{os.fspath(path or '.')}: {STARTUP_CODE}"
    return None
