"""grep: regex search over the workspace's files, with ripgrep when it is there.

Both engines search the same files (what `list` shows, binary files left out) in the same
order and print `path:line:text`, so the model sees one output whichever ran; ripgrep is
only faster. A pattern ripgrep cannot parse (look-arounds, backreferences) falls back to
Python's `re`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.files import decode_line, iter_lines
from elelem_kernel.tools.workspace import (
    MAX_BYTES,
    MAX_LINES,
    Workspace,
    clip,
    files_under,
    glob_regex,
    looks_binary,
)

#: Longest matching line shown; longer ones are cut with a note.
MATCH_CHARS = 500
_BATCH = 500


def grep(
    ws: Workspace,
    pattern: str,
    path: str | None = None,
    glob: str | None = None,
    ignore_case: bool = False,
    engine: str = "auto",
) -> dict:
    """Lines matching `pattern` under `path` as `path:line:text`, capped, with counts.

    `engine` is "auto" (ripgrep when installed), "rg" or "python".
    """
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as e:
        raise ToolError(f"invalid regular expression {pattern!r}: {e}") from None
    base = ws.resolve(path)
    rel = ws.relative(base)
    if not base.exists():
        raise ToolError(f'no such file or folder: "{rel}". Call list to see the workspace.')
    files = files_under(base)
    if glob:
        match = glob_regex(glob).match
        start = base if base.is_dir() else base.parent
        files = [p for p in files if match(p.relative_to(start).as_posix())]
    names = [ws.relative(p) for p in files if ws.holds(p) and not looks_binary(p)]
    rg = shutil.which("rg") if engine in ("auto", "rg") else None
    if engine == "rg" and rg is None:
        raise ToolError("ripgrep (rg) is not installed; use engine='python'")
    found = _Matches()
    if not (rg and _search_rg(rg, ws.root, pattern, ignore_case, names, found)):
        found = _Matches()
        _search_python(ws.root, regex, names, found)
    return found.result(rel, pattern)


class _Matches:
    """Collects matches up to the bounds while counting all of them."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.count = 0
        self.files: set[str] = set()

    def add(self, name: str, number: int, text: str) -> None:
        self.count += 1
        self.files.add(name)
        entry = f"{name}:{number}:{clip(text, MATCH_CHARS)}"
        if len(self.lines) < MAX_LINES and self.size + len(entry) <= MAX_BYTES:
            self.lines.append(entry)
            self.size += len(entry) + 1

    def result(self, rel: str, pattern: str) -> dict:
        out: dict = {
            "path": rel,
            "matches": "\n".join(self.lines),
            "count": self.count,
            "files": len(self.files),
        }
        if len(self.lines) < self.count:
            out["truncated"] = (
                f"showing {len(self.lines)} of {self.count} matching lines in {len(self.files)} "
                "files; narrow it with path=, glob= or a more specific pattern"
            )
        if not self.count:
            out["note"] = f"no lines match {pattern!r}"
        return out


def _search_rg(
    rg: str, root: Path, pattern: str, ignore_case: bool, names: list[str], found: _Matches
) -> bool:
    """Run ripgrep over `names` in order; False when it could not do the search."""
    command = [rg, "--no-config", "--text", "--null", "--line-number", "--with-filename"]
    command += ["--no-heading", "--color", "never", "--threads", "1", "--crlf"]
    command += ["--ignore-case"] if ignore_case else ["--case-sensitive"]
    for start in range(0, len(names), _BATCH):
        batch = names[start : start + _BATCH]
        with subprocess.Popen(
            [*command, "--regexp", pattern, "--", *batch],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        ) as proc:
            assert proc.stdout is not None
            for part, _ in iter_lines(proc.stdout):
                name, _, rest = part.partition(b"\0")
                number, _, text = rest.partition(b":")
                if number.isdigit():
                    found.add(name.decode("utf-8", "replace"), int(number), decode_line(text)[0])
        # 2 is an error; with nothing found (a pattern rg cannot parse), Python's re takes over
        if proc.returncode not in (0, 1) and not found.count:
            return False
    return True


def _search_python(root: Path, regex: re.Pattern[str], names: list[str], found: _Matches) -> None:
    for name in names:
        try:
            f = open(root / name, "rb")
        except OSError:
            continue
        with f:
            for number, (part, _) in enumerate(iter_lines(f), 1):
                text = decode_line(part)[0]
                if regex.search(text):
                    found.add(name, number, text)
