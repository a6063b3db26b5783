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

import json
import os
import stat
import time
from pathlib import Path

PROJECT_FILES = (".agents/mcp.json", ".mcp.json")
PLUGIN_FOLDER = ".agents/plugins"
MAX_FILE_BYTES = 4 << 20  #: a project file larger than this is hashed as a marker, never run


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
            found.extend(sorted(p for p in plugins.glob("*.py") if p.is_file()))
    except OSError:
        pass
    found.extend(folder / name for name in PROJECT_FILES if (folder / name).is_file())
    return found


def contents(folder: Path | str) -> dict[Path, bytes | str]:
    """Each project file of `folder` read once: its bytes, or a marker saying why it was
    not read (not a regular file, unreadable, too large). Plugins run from these very
    bytes after they were hashed, so what runs is what was trusted (never a cache)."""
    found: dict[Path, bytes | str] = {}
    for path in project_files(folder):
        try:
            found[path] = read_file(path)
        except OSError as e:
            found[path] = f"<unreadable: {e.strerror}>"
    return found


def read_file(path: Path) -> bytes | str:
    """A regular file's bytes, or a marker for a FIFO or device (swapped in after the
    listing: named, never read, so reading can neither hang nor fill memory) or a file
    over `MAX_FILE_BYTES`."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "<not a regular file>"
        data = f.read(MAX_FILE_BYTES + 1)
    return data if len(data) <= MAX_FILE_BYTES else f"<larger than {MAX_FILE_BYTES} bytes>"


def fingerprint(folder: Path | str, files: dict[Path, bytes | str] | None = None) -> str:
    """A hash of the names and contents of `folder`'s project files (`files`: as read by
    `contents`, read now when not given)."""
    # hashlib (and OpenSSL) only once a folder's files are hashed: not on a plain turn's path
    import hashlib

    folder = Path(folder)
    digest = hashlib.sha256()
    for path, data in (contents(folder) if files is None else files).items():
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(data if isinstance(data, bytes) else data.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _key(folder: Path | str) -> str:
    return str(Path(folder).expanduser().resolve())


def trusted() -> dict[str, dict[str, object]]:
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
    return status(folder) == "trusted"


def status(folder: Path | str, files: dict[Path, bytes | str] | None = None) -> str:
    """`trusted`, `changed` (trusted, but its project files changed since) or `untrusted`;
    `files` as `contents` read them (read now when not given)."""
    entry = trusted().get(_key(folder))
    if entry is None:
        return "untrusted"
    return "trusted" if entry.get("hash") == fingerprint(folder, files) else "changed"


def _save(folders: dict[str, dict[str, object]]) -> None:
    path = store_path()
    # tempfile (shutil, random, bz2, lzma) only when the trust store is written
    import tempfile

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


def default_folders(workspace: Path | str, cwd: Path | str | None = None) -> list[Path]:
    """What `trust` with no folder means: the workspace root, and the current folder too
    when it differs and holds project files (plugins load from the current folder)."""
    folders = [Path(_key(workspace))]
    here = Path(_key(cwd if cwd is not None else Path.cwd()))
    if here != folders[0] and project_files(here):
        folders.append(here)
    return folders


def _files_text(folder: Path) -> str:
    files = project_files(folder)
    if not files:
        return "  (no project files yet: any added later asks again)"
    return "\n".join(f"- `{p.relative_to(folder).as_posix()}`" for p in files)


def trust_text(folders: list[Path]) -> str:
    """Trust `folders` and say what that lets run: each one's project files."""
    parts = []
    for folder in folders:
        done = trust(folder)
        parts.append(
            f"Trusted {done}: these project files load from now on, and a change to any "
            f"of them asks again:\n{_files_text(done)}"
        )
    return "\n\n".join(parts)


def revoke_text(folders: list[Path]) -> str:
    """Revoke the trust of `folders`; says which were trusted."""
    lines = []
    for folder in folders:
        key = _key(folder)
        if revoke(key):
            lines.append(f"Revoked the trust of {key}: its project files are skipped from now on.")
        else:
            lines.append(f"{key} was not trusted.")
    return "\n".join(lines)


def list_text() -> str:
    """The trusted folders, each with whether its project files are as they were trusted."""
    folders = trusted()
    if not folders:
        return f"No folder is trusted yet (kept in {store_path()})."
    lines = [f"Trusted folders (kept in {store_path()}):"]
    for key in sorted(folders):
        if not Path(key).is_dir():
            state = "gone"
        elif status(key) == "trusted":
            n = len(project_files(key))
            state = f"trusted, {n} project file{'' if n == 1 else 's'}"
        else:
            state = "its project files changed since it was trusted: they are skipped"
        lines.append(f"- {key}: {state}")
    return "\n".join(lines)
