"""The workspace: the one folder the tools may touch, and how results stay small.

Every path a tool receives goes through `Workspace.resolve`, which refuses `..` escapes,
absolute paths elsewhere and symlinks pointing out, with a message the model can act on.
Writes are atomic (a temp file in the same folder, then `os.replace`) so a crash never
leaves half a file. The output helpers keep results bounded and say what they cut.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from collections import deque
from pathlib import Path

from elelem_kernel.errors import ToolError
from elelem_kernel.text import clip as text_clip
from elelem_kernel.tools import git_command

#: Result bounds: roughly what fits a model's context without crowding it.
MAX_BYTES = 50_000
MAX_LINES = 2_000
#: Bytes from a file's start that tell binary (a NUL among them) from text.
SNIFF_BYTES = 8192


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


def find_root(folder: str | os.PathLike[str]) -> Path:
    """The root of the git repository holding `folder`, else `folder` (both resolved)."""
    start = Path(folder).expanduser().resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


#: Folders skipped when walking a tree outside git: caches and environments, never sources.
NOISE_DIRS = frozenset(
    {
        ".git",
        "__pycache__",
        ".ipynb_checkpoints",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)


def files_under(base: Path, root: Path) -> list[str]:
    """Files under `base` as sorted `/`-separated names relative to `root`.

    Inside a git repository this is git's view (.gitignore respected). Outside git, or when
    git lists nothing there (an ignored folder asked for by name), the tree is walked
    without following symlinked folders, skipping `NOISE_DIRS`. Names that lead out of
    `root` through a symlink (the file or a folder above it) are left out: the list holds
    only what the tools may open. Strings rather than `Path`s, and one directory read per
    folder rather than a stat per file: this runs over tens of thousands of files.
    """
    if base.is_file():
        return [base.relative_to(root).as_posix()]
    prefix = "" if base == root else base.relative_to(root).as_posix() + "/"
    folder, top = str(base), str(root)
    found = _git_files(folder, top)
    if found is None:
        found = _walk_names(folder, top)
    # git lists a conflicted file once per stage; its runs are sorted, so sorting is cheap
    return [prefix + name for name in dict.fromkeys(sorted(found))]


def _git_files(folder: str, top: str) -> list[str] | None:
    """git's files under `folder`, confined (`_confined`); None outside git or if none.

    Untracked files come from a second git process, which walks the tree while the
    tracked ones are checked here.
    """
    try:
        untracked = _git_ls(folder, "--others", "--exclude-standard")
    except OSError:
        return None
    with untracked:
        try:
            tracked = _names(_git_ls(folder, "--cached"))
        except OSError:
            tracked = None
        found = _confined(folder, top, tracked or [])
        others = _names(untracked)
    if tracked is None or others is None or not (tracked or others):
        return None
    return found + _confined(folder, top, others)


def _git_ls(folder: str, *options: str) -> subprocess.Popen[bytes]:
    return git_command.popen(folder, "ls-files", "-z", *options, "--", ".")


def _names(proc: subprocess.Popen[bytes]) -> list[str] | None:
    """The names a `_git_ls` process printed; None when it failed or hung."""
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    if proc.returncode != 0:
        return None
    return [n for n in out.decode("utf-8", "replace").split("\0") if n]


def _confined(folder: str, top: str, names: list[str]) -> list[str]:
    """The `names` (relative to `folder`) that are files, or links to files, inside `top`.

    git's index may name files the work tree no longer has, or has behind a symlink, so
    each folder is checked once (`_folder_inside`) and read once for its entries' types.
    """
    by_folder: dict[str, list[str]] = {}
    for name in names:
        parent, _, leaf = name.rpartition("/")
        by_folder.setdefault(parent, []).append(leaf)
    checked: dict[str, bool] = {"": True}
    out = []
    for parent, leaves in by_folder.items():
        if not _folder_inside(folder, top, parent, checked):
            continue
        try:
            with os.scandir(os.path.join(folder, parent)) as it:
                entries = {e.name: e for e in it}
        except OSError:
            continue
        for leaf in leaves:
            entry = entries.get(leaf)
            if entry is not None and _file_inside(entry, top):
                out.append(f"{parent}/{leaf}" if parent else leaf)
    return out


def _folder_inside(folder: str, top: str, rel: str, checked: dict[str, bool]) -> bool:
    """Whether folder `rel` below `folder` is inside `top`: its parent is, and it is a real
    folder or a symlink resolving inside. Memoised in `checked`: one lstat per folder."""
    if rel in checked:
        return checked[rel]
    parent = rel.rpartition("/")[0]
    path = os.path.join(folder, rel)
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = 0
    ok = _folder_inside(folder, top, parent, checked) and (
        stat.S_ISDIR(mode) or (stat.S_ISLNK(mode) and _under(os.path.realpath(path), top))
    )
    checked[rel] = ok
    return ok


def _file_inside(entry: os.DirEntry[str], top: str) -> bool:
    """Whether the directory entry is a regular file, or a symlink to one inside `top`."""
    if entry.is_file(follow_symlinks=False):
        return True
    if not entry.is_symlink():
        return False
    real = os.path.realpath(entry.path)
    return _under(real, top) and os.path.isfile(real)


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _walk_names(folder: str, top: str) -> list[str]:
    """Files below `folder`, relative to it, without entering symlinked folders or noise."""
    out = []
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(os.path.join(folder, rel)) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in NOISE_DIRS:
                    pending.append(name)
            elif _file_inside(entry, top):
                out.append(name)
    return out


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step, keeping the old file's permissions."""
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


def looks_binary(path: str | os.PathLike[str], sample: int = SNIFF_BYTES) -> bool:
    """True when the file's first bytes hold a NUL, as git and ripgrep decide.

    Opened without blocking, so a FIFO (refused elsewhere: `regular`) cannot hang it.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return b"\0" in os.read(fd, sample)
    finally:
        os.close(fd)


def human_size(n: int) -> str:
    """`n` bytes as a short figure: 512 B, 12.3 KB, 20.0 MB."""
    if n < 1000:
        return f"{n} B"
    for unit, scale in (("KB", 1e3), ("MB", 1e6)):
        if n < scale * 1000:
            return f"{n / scale:.1f} {unit}"
    return f"{n / 1e9:.1f} GB"


def clip(text: str, limit: int = 2_000) -> str:
    """`text` cut to `limit` characters, marking the cut."""
    return text_clip(text, limit)


class HeadTail:
    """A bounded byte sink keeping the first and last `limit / 2` bytes of a stream."""

    def __init__(self, limit: int = MAX_BYTES):
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self.lines = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of the stream."""
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.tail_size -= len(self.tail.popleft())

    @property
    def cut(self) -> int:
        """How many bytes in the middle were dropped."""
        return max(0, self.total - len(self.head) - min(self.tail_size, self.tail_limit))

    def text(self) -> str:
        """What was kept, decoded, with a marker saying how much is missing in the middle."""
        tail = b"".join(self.tail)[-self.tail_limit :] if self.tail else b""
        head = self.head.decode("utf-8", errors="replace")
        if not self.cut:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        return (
            head
            + f"\n[... {self.cut} bytes cut from the middle of {self.total} ...]\n"
            + tail.decode("utf-8", errors="replace")
        )


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def unified_diff(before: str, after: str, name: str, limit: int = MAX_BYTES) -> str:
    """A unified diff of two texts of file `name`, cut at `limit` characters."""
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}" if before else "/dev/null",
        tofile=f"b/{name}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if len(text) > limit:
        return text[:limit] + f"\n[... diff cut: {len(text) - limit} more characters]\n"
    return text
