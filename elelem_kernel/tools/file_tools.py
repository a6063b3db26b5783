"""File tools: read, list, write and edit files inside the workspace.

Each function takes the `Workspace` and the tool's arguments, returns a JSON-able dict and
raises `ToolError` with an actionable message when the input is wrong. Reading streams the
file line by line, so a range of a huge file costs a range's worth of memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

from elelem_kernel import images
from elelem_kernel.errors import ToolError
from elelem_kernel.text import human_size, line_cut, showing
from elelem_kernel.tools import changes, protected
from elelem_kernel.tools.bounds import MAX_BYTES, MAX_LINES, unified_diff
from elelem_kernel.tools.declaration import (
    PATH,
    STRING,
    Arguments,
    Result,
    Tool,
    ToolContext,
)
from elelem_kernel.tools.globs import Glob
from elelem_kernel.tools.listing import files_under, looks_binary
from elelem_kernel.tools.protected import check_writable
from elelem_kernel.tools.regular_files import check_regular, open_regular
from elelem_kernel.tools.workspace import Workspace, atomic_write

#: Longest line `read` shows; the rest of a longer line is cut with a note.
LINE_CHARS = 2_000
#: Bytes of a line `iter_lines` keeps: room for `LINE_CHARS` characters of any UTF-8.
LINE_BYTES = LINE_CHARS * 4
_CHUNK = 1 << 16


def read(ws: Workspace, path: str, offset: int = 1, limit: int = MAX_LINES) -> Result:
    """Numbered lines `offset`..`offset+limit-1` of a text file, and its total line count;
    a PNG, JPEG, GIF or WebP file as an image (`_images`)."""
    target = _existing_file(ws, path, hint="read")
    rel = ws.relative(target)
    if _image_type(target):
        return read_image(target, rel)
    offset, limit = max(1, offset), max(1, min(limit, MAX_LINES))
    shown: list[str] = []
    size, n, replaced, stopped = 0, 0, False, False
    with open_regular(target, rel) as f:
        for n, (part, length) in enumerate(iter_lines(f), 1):
            if n < offset:
                continue
            text, bad = decode_line(part)
            replaced |= bad
            if length > len(part) or len(text) > LINE_CHARS:
                text = text[:LINE_CHARS] + " " + line_cut(length)
            entry = f"{n:>6}\t{text}"
            if len(shown) >= limit or (shown and size + len(entry) > MAX_BYTES):
                stopped = True
                break
            shown.append(entry)
            size += len(entry) + 1
        total = n + _count_rest(f) if stopped else n
    if not shown and total:
        raise ToolError(f"offset {offset} is past the end of {rel}: it has {total} lines")
    result = lines_result(rel, shown, offset, total)
    if replaced:
        result["note"] = "bytes that are not valid UTF-8 were replaced with U+FFFD"
    if target.suffix == ".ipynb":
        result["note"] = "a notebook: notebook_read shows its cells and outputs more compactly"
    return result


def lines_result(rel: str, shown: list[str], offset: int, total: int) -> Result:
    """`read`'s answer for numbered lines `shown` from `offset` of `total`: which lines,
    and how to ask for the rest (the editor's buffer is read the same way, acp/editor_files.py)."""
    last = offset + len(shown) - 1
    result: Result = {"path": rel, "content": "\n".join(shown), "total_lines": total}
    if shown:
        result["lines"] = f"{offset}-{last}"
    else:
        result["note"] = "the file is empty"
    if last < total:
        result["truncated"] = showing(
            f"lines {offset}-{last}", total, "", f"call read with offset={last + 1} for more"
        )
    return result


def read_image(target: Path, rel: str) -> Result:
    """An image file for the model: its size and type, the image itself as `_images`."""
    size = target.stat().st_size
    if size > images.MAX_INPUT_BYTES:
        raise ToolError(
            f'"{rel}" is an image of {human_size(size)}, too large to read; make a smaller '
            "copy with python (Pillow) or bash and read that."
        )
    with open_regular(target, rel) as f:
        raw = f.read(images.MAX_INPUT_BYTES + 1)
    image = images.from_bytes(raw)
    if isinstance(image, str):
        raise ToolError(f'"{rel}" could not be read as an image: {image}')
    return {
        "path": rel,
        "image": image.describe(),
        "_images": [{"mime_type": image.mime_type, "data": image.as_dict()["data"]}],
    }


def _image_type(target: Path) -> str | None:
    """The image type a file starts like (PNG, JPEG, GIF, WebP), or None."""
    try:
        with open_regular(target, str(target)) as f:
            return images.sniff(f.read(16))
    except (OSError, ToolError):
        return None


def list_files(ws: Workspace, path: str | None = None, pattern: str | None = None) -> Result:
    """Files under `path` (relative to the root), glob-filtered, .gitignore respected in git."""
    base = ws.resolve(path)
    rel = ws.relative(base)
    if not base.exists():
        raise ToolError(
            f'no such file or folder: "{rel}". Call list without a path to see the workspace.'
        )
    files = files_under(base, ws.root)
    if pattern:
        files = matching(files, pattern, ws.relative(base if base.is_dir() else base.parent))
    names: list[str] = []
    size = 0
    for name in files:
        if len(names) >= MAX_LINES or size + len(name) > MAX_BYTES:
            break
        names.append(name)
        size += len(name) + 4
    result: Result = {"path": rel, "files": names, "count": len(files)}
    if len(names) < len(files):
        result["truncated"] = showing(
            len(names),
            len(files),
            f"files ({len(files) - len(names)} left out)",
            "narrow it with path= or pattern= (e.g. pattern='*.py')",
        )
    if not files:
        result["note"] = f"no files match {pattern!r}" if pattern else "no files here"
    return result


def matching(names: list[str], pattern: str, folder: str) -> list[str]:
    """The names (relative to the root) whose path below `folder` matches the glob."""
    match = Glob(pattern).match
    cut = 0 if folder == "." else len(folder) + 1
    return [n for n in names if match(n[cut:])]


def write(ws: Workspace, path: str, content: str, protected: Path | None = None) -> Result:
    """Write `content` to `path` atomically, creating folders; say if it created or replaced."""
    target = _writable(ws, path, protected)
    existed = target.exists()
    data = content.encode("utf-8")
    atomic_write(target, data)
    return {
        "path": ws.relative(target),
        "bytes": len(data),
        "action": "replaced" if existed else "created",
    }


def write_preview(ws: Workspace, path: str, content: str) -> str:
    """The diff `write` would make, for the person approving it (or why it would fail)."""
    target = ws.resolve(path)
    try:
        check_writable(ws, path, target)
    except ToolError as e:
        return f"write {path}: would fail: {e}"
    rel = ws.relative(target)
    try:
        check_regular(target, rel)
    except ToolError as e:
        return f"write {rel}: would fail: {e}"
    before = ""
    if target.is_file():
        if looks_binary(target):
            return f"replace binary file {rel} ({human_size(target.stat().st_size)}) with text"
        before = target.read_text("utf-8", errors="replace")
    diff = unified_diff(before, content, rel)
    verb = "replace" if target.exists() else "create"
    return f"{verb} {rel} ({human_size(len(content.encode('utf-8')))})\n{diff}"


def edit(
    ws: Workspace,
    path: str,
    old: str,
    new: str,
    replace_all: bool = False,
    protected: Path | None = None,
) -> Result:
    """Replace the exact text `old` with `new` (once, or every time); return the diff."""
    target, before, after, count = plan_edit(ws, path, old, new, replace_all, protected)
    atomic_write(target, after.encode("utf-8"))
    rel = ws.relative(target)
    return {"path": rel, "replacements": count, "diff": unified_diff(before, after, rel)}


def edit_preview(ws: Workspace, path: str, old: str, new: str, replace_all: bool = False) -> str:
    """The diff `edit` would make, or why it would fail."""
    try:
        target, before, after, _ = plan_edit(ws, path, old, new, replace_all)
    except ToolError as e:
        return f"edit {path}: would fail: {e}"
    return unified_diff(before, after, ws.relative(target))


def plan_edit(
    ws: Workspace,
    path: str,
    old: str,
    new: str,
    replace_all: bool = False,
    protected: Path | None = None,
) -> tuple[Path, str, str, int]:
    """Check an edit and compute it: (file, text before, text after, replacements)."""
    target = _writable(ws, path, protected)
    rel = ws.relative(target)
    if not target.exists():
        raise ToolError(f'no such file: "{rel}". To create a file, call write.')
    if target.is_dir() or looks_binary(target):
        raise ToolError(f'"{rel}" is not a text file; edit changes text files only.')
    try:
        with open_regular(target, rel) as f:
            before = f.read().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f'"{rel}" is not valid UTF-8; edit refuses to rewrite it rather than corrupt it.'
        ) from None
    after, count = apply_edit(rel, before, old, new, replace_all)
    return target, before, after, count


def apply_edit(
    rel: str, before: str, old: str, new: str, replace_all: bool = False
) -> tuple[str, int]:
    """The text after replacing `old` with `new` in `before` (of file `rel`), and how many
    times; `ToolError` saying why when `old` is empty, absent or not unique."""
    if old == "":
        raise ToolError(
            "old is empty; give the exact text to replace (to write a whole file, call write)"
        )
    if old == new:
        raise ToolError("old and new are the same; nothing to change")
    if old not in before and "\r\n" in before and old.replace("\n", "\r\n") in before:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = before.count(old)
    if count == 0:
        raise ToolError(_not_found(rel, before, old))
    if count > 1 and not replace_all:
        lines = _lines_of(before, old)
        where = ", ".join(map(str, lines[:10])) + (" ..." if len(lines) > 10 else "")
        raise ToolError(
            f"old appears {count} times in {rel} (lines {where}); include more surrounding "
            "lines to make it unique, or pass replace_all=true to replace every one"
        )
    return before.replace(old, new), count


def _existing_file(ws: Workspace, path: str, hint: str) -> Path:
    target = ws.resolve(path)
    rel = ws.relative(target)
    if not target.exists():
        raise ToolError(f'no such file: "{rel}". Call list to see the files in the workspace.')
    if target.is_dir():
        raise ToolError(
            f'"{rel}" is a folder, not a file; call list with path="{rel}" to see its files.'
        )
    check_regular(target, rel)
    if hint == "read" and _image_type(target):
        return target
    if looks_binary(target):
        raise ToolError(
            f'"{rel}" is a binary file ({human_size(target.stat().st_size)}); {hint} shows text '
            "files only. Inspect it with bash (e.g. `file`, `xxd | head`) or python."
        )
    return target


def _writable(ws: Workspace, path: str, protected: Path | None) -> Path:
    target = ws.resolve(path)
    check_writable(ws, path, target)
    rel = ws.relative(target)
    if target.is_dir():
        raise ToolError(f'"{rel}" is a folder; give a file path.')
    check_regular(target, rel)
    if protected is not None and target == protected.resolve():
        raise ToolError(
            f'"{rel}" is the notebook open in the frontend; rewriting it on disk would clash '
            "with the open editor. Use propose_cell(source) to offer a new cell instead."
        )
    return target


def iter_lines(f: IO[bytes], keep: int = LINE_BYTES) -> Iterator[tuple[bytes, int]]:
    """Each line's first `keep` bytes (a few screens) and its full length in bytes."""
    while part := f.readline(keep):
        length = len(part)
        if not part.endswith(b"\n"):
            while more := f.readline(_CHUNK):
                length += len(more)
                if more.endswith(b"\n"):
                    break
        yield part, length


def _count_rest(f: BinaryIO) -> int:
    count, last = 0, b"\n"
    while chunk := f.read(_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def decode_line(raw: bytes) -> tuple[str, bool]:
    """A line's text without its line ending, and whether bytes had to be replaced."""
    raw = raw.rstrip(b"\n").removesuffix(b"\r")
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), True


def _lines_of(text: str, needle: str) -> list[int]:
    out, start = [], 0
    while (i := text.find(needle, start)) != -1:
        out.append(text.count("\n", 0, i) + 1)
        start = i + 1
    return out


def _not_found(rel: str, text: str, old: str) -> str:
    message = f"old was not found in {rel}."
    stripped = "\n".join(line.strip() for line in old.splitlines()).strip()
    flat = "\n".join(line.strip() for line in text.splitlines())
    if stripped and stripped in flat:
        message += " It matches when indentation is ignored: copy the exact whitespace."
    elif re.match(r"\s*\d+\t", old):
        message += " Leave out the line numbers that read adds."
    return message + " Call read to see the current text and copy it exactly."


def reading(context: ToolContext) -> tuple[Tool, ...]:
    """The `read` and `list` tools on the context's workspace."""

    def read_tool(args: Arguments) -> Result:
        ws = Workspace(context.workspace)
        return read(ws, args["path"], args.get("offset", 1), args.get("limit", MAX_LINES))

    def list_tool(args: Arguments) -> Result:
        return list_files(Workspace(context.workspace), args.get("path"), args.get("pattern"))

    return (
        Tool(
            "read",
            "Read a text file: numbered lines, 2,000 at most per call; says the total line "
            "count and how to read on (offset). A PNG, JPEG, GIF or WebP file comes back as "
            "the image. Refuses other binary files.",
            {
                "path": PATH,
                "offset": {"type": "integer", "minimum": 1, "description": "first line (1-based)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LINES},
            },
            read_tool,
            required=("path",),
            aliases=("open",),
        ),
        Tool(
            "list",
            "List files under a folder (default: the workspace root), filtered by a glob like "
            "'*.py' or 'src/**/*.ipynb'; .gitignore is respected inside a git repository.",
            {"path": PATH, "pattern": {"type": "string", "description": "glob, e.g. '*.csv'"}},
            list_tool,
            aliases=("ls", "glob"),
        ),
    )


def writing(context: ToolContext) -> tuple[Tool, ...]:
    """The `write` and `edit` tools: each change kept in the turn's record for undo."""

    def ws() -> Workspace:
        return Workspace(context.workspace)

    def write_tool(args: Arguments) -> Result:
        path, content = args["path"], args["content"]
        return changes.kept(
            context, "write", path, lambda: write(ws(), path, content, context.open_notebook)
        )

    def edit_tool(args: Arguments) -> Result:
        old, new, every = args["old"], args["new"], args.get("replace_all", False)
        return changes.kept(
            context,
            "edit",
            args["path"],
            lambda: edit(ws(), args["path"], old, new, every, context.open_notebook),
        )

    def startup_code(args: Arguments) -> str | None:
        return protected.startup_code(ws(), args["path"])

    return (
        Tool(
            "write",
            "Write a whole file (created with its folders, or replaced). To change part of a "
            "file, use edit.",
            {"path": PATH, "content": STRING},
            write_tool,
            required=("path", "content"),
            kind="write",
            preview=lambda a: write_preview(ws(), a["path"], a["content"]),
            sensitive=startup_code,
        ),
        Tool(
            "edit",
            "Replace an exact piece of text in a file with new text; old must appear exactly "
            "once unless replace_all is true. Returns the diff.",
            {"path": PATH, "old": STRING, "new": STRING, "replace_all": {"type": "boolean"}},
            edit_tool,
            required=("path", "old", "new"),
            kind="write",
            preview=lambda a: edit_preview(
                ws(), a["path"], a["old"], a["new"], a.get("replace_all", False)
            ),
            sensitive=startup_code,
        ),
    )
