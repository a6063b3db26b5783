"""The workspace: the one folder the tools may touch.

Every path a tool receives goes through `Workspace.resolve`, which refuses `..` escapes,
absolute paths elsewhere and symlinks pointing out, with a message the model can act on.
Writes are atomic (a temp file in the same folder, then `os.replace`) so a crash never
leaves half a file. Listing files is `tools/listing.py`; keeping results small is
`tools/bounds.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

from elelem_kernel.errors import ToolError


class Workspace:
    """A root folder; paths are resolved inside it and nowhere else."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root).expanduser().resolve()

    @classmethod
    def detect(cls, folder: str | os.PathLike[str]) -> Workspace:
        """The git root enclosing `folder`, or `folder` itself when it is not in a repo."""
        return cls(find_root(folder))

    def resolve(self, path: str | os.PathLike[str] | None) -> Path:
        """The real path for a tool's `path` argument; `ToolError` when it leaves the root."""
        text = os.fspath(path) if path not in (None, "") else "."
        if "\0" in text:
            raise ToolError(f"path {text!r} contains a NUL byte")
        given = Path(text).expanduser()
        lexical = Path(os.path.normpath(given if given.is_absolute() else self.root / given))
        if not _inside(lexical, self.root):
            how = "is an absolute path" if given.is_absolute() else "goes above it with '..'"
            raise ToolError(
                f'"{text}" is outside the workspace {self.root} (it {how}). '
                "Use a path inside the workspace; relative paths start at its root."
            )
        real = lexical.resolve()
        if not _inside(real, self.root):
            raise ToolError(
                f'"{text}" leads outside the workspace {self.root} through a symlink '
                f"(it points to {real}). Only files inside the workspace can be used."
            )
        return real

    def relative(self, path: Path) -> str:
        """`path` as the model should write it: relative to the root, with `/`."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"


#: A folder the search for the workspace root does not climb above, as git's
#: GIT_CEILING_DIRECTORIES (for one environment: a CI job, a container).
CEILING = "ELELEM_WORKSPACE_CEILING"

#: A file that makes its folder a workspace root, as `.git` does: notebooks/ holds one, so
#: the example notebooks, JupyterLab's terminal and the CLI run there all work on that
#: folder, not on the whole clone around it.
MARKER = ".elelem-workspace"


def find_root(folder: str | os.PathLike[str]) -> Path:
    """The root of the git repository holding `folder`, else `folder` (both resolved).

    The search stops at a folder holding `MARKER`, and at the folder named by
    `ELELEM_WORKSPACE_CEILING`: that folder is the root unless a repository starts below it.
    """
    start = Path(folder).expanduser().resolve()
    ceiling = os.environ.get(CEILING)
    top = Path(ceiling).expanduser().resolve() if ceiling else None
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
        if candidate == top or (candidate / MARKER).is_file():
            return candidate
    return start


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step, keeping the old file's permissions."""
    # tempfile (shutil, random, bz2, lzma) only once a tool writes: not on a turn's path
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
