"""grep: regex search over the workspace's files, with ripgrep when it is there.

Both engines search the same files (what `list` shows, binary files left out) in the same
order and print `path:line:text`, so the model sees one output whichever ran; ripgrep is
only faster. A file is binary when its first 8 KB hold a NUL (`looks_binary`); that is
checked only for files with matches (ripgrep) or while reading (Python), never up front
for every file. A pattern ripgrep cannot parse (look-arounds, backreferences) falls back
to Python's `re`, which runs in a child process (`pyregex`): it can backtrack without end.

Every search is bounded in time: its processes (ripgrep, the Python child) are killed at
`TIMEOUT` seconds, or at once when the call is cancelled (`agrep`), and the model is told
why. Nothing that matches a pattern runs in this process, so interrupts always work.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from heapq import heappop, heappush
from pathlib import Path
from typing import BinaryIO

from elelem_kernel.errors import GroupStopped, ToolError
from elelem_kernel.text import clip, showing
from elelem_kernel.tools import pyregex
from elelem_kernel.tools.bounds import MAX_BYTES, MAX_LINES
from elelem_kernel.tools.children import Children
from elelem_kernel.tools.declaration import PATH, Arguments, Result, Tool, ToolContext
from elelem_kernel.tools.file_tools import (
    LINE_BYTES,
    LINE_CHARS,
    decode_line,
    iter_lines,
    matching,
)
from elelem_kernel.tools.listing import SNIFF_BYTES, list_under, looks_binary, whole_folders
from elelem_kernel.tools.regular_files import check_regular, open_regular
from elelem_kernel.tools.workspace import Workspace

#: Longest matching line shown; longer ones are cut with a note.
MATCH_CHARS = 500
#: ripgrep processes run at once when the files need several command lines.
RG_PROCESSES = min(4, os.cpu_count() or 1)
#: Threads of each ripgrep: two at least, as with one it stats each file it is given
#: three times (twice otherwise), which costs as much as searching small files.
RG_THREADS = max(2, RG_PROCESSES)
#: Bytes of file names per ripgrep command line, well under the kernel's ARG_MAX.
_ARG_BYTES = 100_000
#: Room for the `name NUL number:` before each line ripgrep prints (PATH_MAX and digits).
_PREFIX_BYTES = 4_200
#: Seconds a search may take before its processes are killed.
TIMEOUT = 30.0
#: Seconds a cancelled search is given to wind down before the cancel goes on.
_GRACE = 5.0
#: Files smaller than this are read whole by the Python engine; larger ones are streamed.
_WHOLE_BYTES = 1 << 22


def grep(
    ws: Workspace,
    pattern: str,
    path: str | None = None,
    glob: str | None = None,
    ignore_case: bool = False,
    engine: str = "auto",
    timeout: float = TIMEOUT,
    children: Children | None = None,
) -> Result:
    """Lines matching `pattern` under `path` as `path:line:text`, capped, with counts.

    `engine` is "auto" (ripgrep when installed), "rg" or "python". The search's processes
    are started through `children` (a new group with `timeout` when not given), so it
    ends when they are stopped.
    """
    flags = re.IGNORECASE if ignore_case else 0
    try:
        re.compile(pattern, flags)
    except re.error as e:
        raise ToolError(f"invalid regular expression {pattern!r}: {e}") from None
    base = ws.resolve(path)
    rel = ws.relative(base)
    if not base.exists():
        raise ToolError(f'no such file or folder: "{rel}". Call list to see the workspace.')
    check_regular(base, rel)
    listed = list_under(base, ws.root)
    names = listed.names
    if glob:
        names = matching(names, glob, ws.relative(base if base.is_dir() else base.parent))
    # shutil (bz2, lzma) only once grep runs: the CLI's turn declares grep, seldom calls it
    import shutil

    rg = shutil.which("rg") if engine in ("auto", "rg") else None
    if engine == "rg" and rg is None:
        raise ToolError("ripgrep (rg) is not installed; use engine='python'")
    with children or Children(timeout) as group:
        found = None if names else _Matches()
        if rg and names:
            folders, rest = whole_folders(names, listed.plain)
            found = _search_rg(rg, ws.root, pattern, ignore_case, names, folders + rest, group)
        python = found is None and group.reason is None
        problem = ""
        if python:
            result = pyregex.search(ws.root, pattern, flags, names, group)
            if isinstance(result, dict):
                found = _from_child(result)
            else:
                problem = result
        if group.reason is not None or found is None:
            raise ToolError(_stopped(group, python, problem))
    return found.result(rel, pattern)


async def agrep(
    ws: Workspace,
    pattern: str,
    path: str | None = None,
    glob: str | None = None,
    ignore_case: bool = False,
    timeout: float = TIMEOUT,
) -> Result:
    """`grep` on a worker thread; cancelling this kills its processes, so it ends at once."""
    group = Children(timeout)
    work = asyncio.ensure_future(
        asyncio.to_thread(grep, ws, pattern, path, glob, ignore_case, children=group)
    )
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        group.stop("cancelled")
        # its processes are gone; the thread ends as soon as it sees that (or, if it is
        # still listing files with git, it starts nothing afterwards)
        work.add_done_callback(lambda done: done.cancelled() or done.exception())
        await asyncio.wait([work], timeout=_GRACE)
        raise
    finally:
        group.close()


def _stopped(group: Children, python: bool, problem: str = "") -> str:
    """Why a search gave no result, and what the model can do about it."""
    if group.reason == "cancelled":
        return "grep was interrupted"
    if group.reason != "timeout":
        return f"grep failed: the Python regex engine stopped without an answer: {problem}"
    why = "narrow it with path= or glob="
    if python:
        why = (
            "the pattern needs Python's re (look-arounds and backreferences do), which "
            "backtracks without end on nested repetition such as (a+)+ or (a|aa)+; "
            "rewrite the pattern without that, or " + why
        )
    return f"grep stopped after {group.timeout:g} s without finishing: {why}"


def _from_child(result: Result) -> _Matches:
    return _Matches.of(result["lines"], result["count"], result["files"])


class _Matches:
    """Collects the first matches in file order, up to the bounds, while counting all.

    Matches may come in any order (ripgrep's threads finish files as they go): each has a
    place (the file's index in the list searched, the line number), and what is kept is
    always the matches before some place, as many as the bounds hold. Once a match is
    dropped for room, none after it is kept again, so memory stays within the bounds.
    """

    def __init__(self) -> None:
        #: Kept entries as (-file, -line, entry): the last in file order on top.
        self._kept: list[tuple[int, int, str]] = []
        self._size = 0
        #: The place of the first match dropped for room; nothing after it is kept.
        self._cut: tuple[int, int] | None = None
        self.count = 0
        self.files: set[str] = set()

    @classmethod
    def of(cls, lines: list[str], count: int, files: list[str]) -> _Matches:
        """Matches already collected (by the Python engine's child), in order."""
        found = cls()
        for number, entry in enumerate(lines):
            found._keep(0, number, entry)
        found.count, found.files = count, set(files)
        return found

    @property
    def lines(self) -> list[str]:
        """The kept entries in file order, then line order."""
        return [entry for _, _, entry in sorted(self._kept, reverse=True)]

    def add(self, name: str, number: int, text: str, file: int) -> None:
        """Count a match of file `name` (index `file` in the list searched); keep it if it
        is before what the bounds already dropped."""
        self.count += 1
        self.files.add(name)
        if self._cut is None or (file, number) < self._cut:
            self._keep(file, number, f"{name}:{number}:{clip(text, MATCH_CHARS)}")

    def _keep(self, file: int, number: int, entry: str) -> None:
        heappush(self._kept, (-file, -number, entry))
        self._size += len(entry) + 1
        # the entries kept always fit `MAX_LINES` and `MAX_BYTES` (the last newline free)
        while len(self._kept) > MAX_LINES or self._size > MAX_BYTES + 1:
            file, number, entry = heappop(self._kept)
            self._size -= len(entry) + 1
            self._cut = (-file, -number)

    def extend(self, other: _Matches) -> None:
        """Add the matches another collector (over the same list of files) found."""
        for file, number, entry in other._kept:
            if self._cut is None or (-file, -number) < self._cut:
                self._keep(-file, -number, entry)
        self.count += other.count
        self.files |= other.files

    def result(self, rel: str, pattern: str) -> Result:
        out: Result = {
            "path": rel,
            "matches": "\n".join(self.lines),
            "count": self.count,
            "files": len(self.files),
        }
        if len(self.lines) < self.count:
            out["truncated"] = showing(
                len(self.lines),
                self.count,
                f"matching lines in {len(self.files)} files",
                "narrow it with path=, glob= or a more specific pattern",
            )
        if not self.count:
            out["note"] = f"no lines match {pattern!r}"
        return out


def _search_rg(
    rg: str,
    root: Path,
    pattern: str,
    ignore_case: bool,
    names: list[str],
    targets: list[str],
    group: Children,
) -> _Matches | None:
    """Run ripgrep over `targets` and merge its matches in file order; None on failure.

    `targets` are `names` and folders all of whose files are among them (`whole_folders`),
    each searched without entering subfolders or following links: one directory read
    rather than a stat per file. A file ripgrep reports that is not among `names`
    (created since the listing) is left out.
    """
    command = [rg, "--no-config", "--text", "--null", "--line-number", "--with-filename"]
    command += ["--no-heading", "--color", "never", "--crlf", "--threads", str(RG_THREADS)]
    command += ["--no-ignore", "--hidden", "--max-depth", "1"]
    command += ["--ignore-case"] if ignore_case else ["--case-sensitive"]
    command += ["--regexp", pattern, "--"]

    def run(batch: list[str]) -> _Matches | None:
        return _run_rg([*command, *batch], root, names, group)

    batches = _batches(targets, _ARG_BYTES)
    if len(batches) == 1:
        return run(batches[0])
    with ThreadPoolExecutor(min(RG_PROCESSES, len(batches))) as pool:
        parts = list(pool.map(run, batches))
    found = _Matches()
    for part in parts:
        if part is None:
            return None
        found.extend(part)
    return found


def _run_rg(command: list[str], root: Path, names: list[str], group: Children) -> _Matches | None:
    found = _Matches()
    try:
        proc = group.popen(
            command,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except GroupStopped:
        return None
    with proc:
        assert proc.stdout is not None
        head, name, index = b"", "", None
        top = os.fsencode(root) + b"/"
        for part, _ in iter_lines(proc.stdout, LINE_BYTES + _PREFIX_BYTES):
            file, nul, rest = part.partition(b"\0")
            number, _, text = rest.partition(b":")
            if not nul or not number.isdigit():
                continue
            if file != head:
                head, name = file, file.decode("utf-8", "replace")
                index = _place(top, head, name, names)
            if index is not None:
                line = decode_line(text[:LINE_BYTES])[0]  # what the Python engine keeps
                found.add(name, int(number), line, index)
    # 2 is an error; with nothing found (a pattern rg cannot parse), Python's re takes over
    return None if proc.returncode not in (0, 1) and not found.count else found


def _place(top: bytes, raw: bytes, name: str, names: list[str]) -> int | None:
    """The index in `names` (sorted) of the file ripgrep printed as `raw` (below `top`,
    the root and a slash); None when it is not listed or is binary (`looks_binary`)."""
    # bisect only once grep finds something: the CLI's turn declares grep, seldom calls it
    from bisect import bisect_left

    index = bisect_left(names, name)
    if index == len(names) or names[index] != name:
        return None
    return None if _binary(top + raw) else index


def _binary(path: bytes) -> bool:
    """`looks_binary`, with a file that cannot be read counted as binary (left out)."""
    try:
        return looks_binary(path)
    except OSError:
        return True


def _batches(names: list[str], limit: int = _ARG_BYTES) -> list[list[str]]:
    """Consecutive runs of names of at most `limit` bytes (one command line each)."""
    out: list[list[str]] = [[]]
    size = 0
    for name in names:
        if out[-1] and size + len(name) + 1 > limit:
            out.append([])
            size = 0
        out[-1].append(name)
        size += len(name) + 1
    return out


def _search_python(root: Path, pattern: str, flags: int, names: list[str], found: _Matches) -> None:
    """Python's re over `names` (run in the `pyregex` child, never in a tool's process)."""
    search = re.compile(pattern, flags).search
    for index, name in enumerate(names):
        try:
            f = open_regular(os.path.join(root, name), name)
        except (OSError, ToolError):
            continue
        with f:
            lines = _text_lines(f)
            for number, text in enumerate(lines or (), 1):
                if search(text):
                    found.add(name, number, text, index)


def _text_lines(f: BinaryIO) -> Iterable[str] | None:
    """The lines of an open file as `iter_lines` and `decode_line` give them; None if binary.

    A file under `_WHOLE_BYTES` is read and decoded in one go (most source files); a larger
    one, or one that grew meanwhile, is streamed line by line.
    """
    size = os.fstat(f.fileno()).st_size
    if size < _WHOLE_BYTES:
        data = f.read(size + 1)
        if len(data) <= size:
            return None if b"\0" in data[:SNIFF_BYTES] else split_lines(data)
        f.seek(0)
    if b"\0" in f.read(SNIFF_BYTES):
        return None
    f.seek(0)
    return (decode_line(part)[0] for part, _ in iter_lines(f))


def split_lines(data: bytes) -> list[str]:
    """The lines of a whole file, exactly as `decode_line` gives those `iter_lines` yields."""
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raw = data.split(b"\n")
        if raw[-1] == b"":
            raw.pop()
        return [decode_line(line[:LINE_BYTES])[0] for line in raw]
    if lines[-1] == "":
        lines.pop()
    # a line under LINE_CHARS characters is under LINE_BYTES bytes: iter_lines keeps it whole
    return [
        line.removesuffix("\r")
        if len(line) < LINE_CHARS
        else decode_line(line.encode()[:LINE_BYTES])[0]
        for line in lines
    ]


def definitions(context: ToolContext) -> tuple[Tool, ...]:
    """The `grep` tool on the context's workspace."""

    async def grep_tool(args: Arguments) -> Result:
        ws = Workspace(context.workspace)
        return await agrep(
            ws, args["pattern"], args.get("path"), args.get("glob"), args.get("ignore_case", False)
        )

    return (
        Tool(
            "grep",
            "Search file contents with a regular expression; prints path:line:text for every "
            "matching line (capped, with the total count).",
            {
                "pattern": {"type": "string", "description": "regular expression"},
                "path": PATH,
                "glob": {"type": "string", "description": "only files matching this glob"},
                "ignore_case": {"type": "boolean"},
            },
            grep_tool,
            required=("pattern",),
            aliases=("search",),
        ),
    )
