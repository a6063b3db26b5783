"""Folder trust: what comes with a folder runs only where the person said it may.

A folder's project files (its `.agents/plugins/*.py`, `.agents/mcp.json` and `.mcp.json`)
can run code: a plugin is imported, an MCP config starts programs. A repository someone
merely opened or reviews must not get that, so, as direnv, mise and VS Code do, they load
only in a folder the person trusted with `elelem-kernel trust [DIR]` or `/trust`. The trust
is stored in `~/.agents/trusted.json` with a hash of those files, so a change to any of
them (a pull request adding a plugin) asks again. What the person keeps in `~/.agents/`
and installed packages are theirs and always trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

PROJECT_FILES = (".agents/mcp.json", ".mcp.json")
PLUGIN_FOLDER = ".agents/plugins"


def store_path() -> Path:
    """Where trust is kept: `~/.agents/trusted.json`."""
    return Path.home() / ".agents" / "trusted.json"


def project_files(folder: Path | str) -> list[Path]:
    """The files of `folder` that can run code: plugin files and MCP configs, sorted."""
    folder = Path(folder)
    found: list[Path] = []
    plugins = folder / PLUGIN_FOLDER
    try:
        if plugins.is_dir():
            found.extend(sorted(p for p in plugins.glob("*.py")))
    except OSError:
        pass
    found.extend(folder / name for name in PROJECT_FILES if (folder / name).is_file())
    return found


def fingerprint(folder: Path | str) -> str:
    """A hash of the names and contents of `folder`'s project files."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in project_files(folder):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError as e:
            digest.update(f"<unreadable: {e.strerror}>".encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _key(folder: Path | str) -> str:
    return str(Path(folder).expanduser().resolve())


def trusted() -> dict[str, dict]:
    """Every trusted folder with its record (`hash`, `at`); an unreadable store trusts none."""
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict):
        return {}
    return {k: v for k, v in folders.items() if isinstance(v, dict)}


def is_trusted(folder: Path | str) -> bool:
    """True when `folder` was trusted and its project files have not changed since."""
    entry = trusted().get(_key(folder))
    return entry is not None and entry.get("hash") == fingerprint(folder)


def _save(folders: dict[str, dict]) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trusted.", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"version": 1, "folders": folders}, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def trust(folder: Path | str) -> Path:
    """Trust `folder` as its project files are now; returns the resolved folder."""
    key = _key(folder)
    if not Path(key).is_dir():
        raise NotADirectoryError(f"not a folder: {folder}")
    folders = trusted()
    folders[key] = {"hash": fingerprint(key), "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    _save(folders)
    return Path(key)


def revoke(folder: Path | str) -> bool:
    """Forget the trust of `folder`; False when it was not trusted."""
    folders = trusted()
    if folders.pop(_key(folder), None) is None:
        return False
    _save(folders)
    return True


def how_to_trust(folder: Path | str) -> str:
    """The commands that trust `folder`, for messages about skipped project files."""
    return f"`elelem-kernel trust {_key(folder)}` (or `/trust` in a notebook)"
