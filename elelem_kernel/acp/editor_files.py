"""The file tools through the ACP client's `fs/*`: the editor's buffers instead of the disk.

When the client offers `fs/read_text_file` and `fs/write_text_file`, the agent reads the
editor's buffers (unsaved changes included) and the editor makes, shows and can undo the
agent's writes.

Only where the text comes from and goes to changes: paths are resolved and confined to
the workspace, `.git` and special files are refused, and results have the same shape and
bounds as the disk tools' (`tools/file_tools.py`). What the client cannot read (a binary file,
a path it refuses) is read from disk by the ordinary tool, which says clearly what is
wrong.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent.toolset import Reroute, Rerouted
from elelem_kernel.errors import ToolError
from elelem_kernel.text import line_cut
from elelem_kernel.tools.bounds import MAX_BYTES, MAX_LINES, unified_diff
from elelem_kernel.tools.file_tools import LINE_CHARS, apply_edit, lines_result
from elelem_kernel.tools.protected import check_writable
from elelem_kernel.tools.regular_files import check_regular
from elelem_kernel.tools.workspace import Workspace

if TYPE_CHECKING:
    from elelem_kernel.acp.client import AcpClient

log = logging.getLogger("elelem_kernel.acp")
#: Files larger than this on disk are read by the disk tool, which streams them.
CLIENT_READ_BYTES = 10 * 1024 * 1024


class ClientFiles:
    """`read`, `write` and `edit` for one session, through its ACP client."""

    def __init__(
        self,
        client: AcpClient,
        session_id: str,
        workspace: Callable[[], Path],
        read: bool,
        write: bool,
    ):
        self.client = client
        self.session_id = session_id
        self.workspace = workspace
        self.reads = read
        self.writes = write

    def toolset(self) -> Rerouted:
        """The toolset that runs `read`, `write` and `edit` through the client, as far as
        it offers them, with the disk tools' functions as their fallbacks."""
        routes: dict[str, Reroute] = {}
        if self.reads:
            routes["read"] = self._read
        if self.writes:
            routes["write"] = self._write
        if self.reads and self.writes:
            routes["edit"] = self._edit
        return Rerouted("the editor's files", routes)

    async def text(self, target: Path) -> str:
        return await self.client.read_text_file(self.session_id, str(target))

    def _read(self, disk: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        async def read(args: dict[str, Any]) -> Any:
            ws = Workspace(self.workspace())
            try:
                target = ws.resolve(args["path"])
                if target.is_file() and target.stat().st_size > CLIENT_READ_BYTES:
                    return await asyncio.to_thread(disk, args)
                check_regular(target, ws.relative(target))
                text = await self.text(target)
            except ToolError as e:
                return {"error": str(e)}
            except Exception as e:  # the client could not read it: the disk tool says why
                log.info("client read of %s failed (%s); reading from disk", args["path"], e)
                return await asyncio.to_thread(disk, args)
            return numbered(ws.relative(target), text, args.get("offset", 1), args.get("limit"))

        return read

    def _write(self, disk: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        async def write(args: dict[str, Any]) -> Any:
            ws = Workspace(self.workspace())
            try:
                target = writable(ws, args["path"])
                existed = target.exists()
                await self.client.write_text_file(self.session_id, str(target), args["content"])
            except ToolError as e:
                return {"error": str(e)}
            except Exception as e:  # the client refused: say so, write nothing behind its back
                return {"error": f"the editor could not write {args['path']}: {e}"}
            return {
                "path": ws.relative(target),
                "bytes": len(args["content"].encode("utf-8")),
                "action": "replaced" if existed else "created",
            }

        return write

    def _edit(self, disk: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        async def edit(args: dict[str, Any]) -> Any:
            ws = Workspace(self.workspace())
            try:
                target = writable(ws, args["path"])
                rel = ws.relative(target)
                if not target.is_file():
                    return await asyncio.to_thread(
                        disk, args
                    )  # the disk tool explains a missing file or a folder
                before = await self.text(target)
                after, count = apply_edit(
                    rel, before, args["old"], args["new"], args.get("replace_all", False)
                )
                await self.client.write_text_file(self.session_id, str(target), after)
            except ToolError as e:
                return {"error": str(e)}
            except Exception as e:  # the client refused: say so, change nothing behind its back
                return {"error": f"the editor could not edit {args['path']}: {e}"}
            return {"path": rel, "replacements": count, "diff": unified_diff(before, after, rel)}

        return edit


def writable(ws: Workspace, path: str) -> Path:
    """`path` resolved in the workspace, checked as the disk tools check a write target."""
    target = ws.resolve(path)
    check_writable(ws, path, target)
    check_regular(target, ws.relative(target))
    return target


def numbered(rel: str, text: str, offset: int = 1, limit: int | None = None) -> dict[str, Any]:
    """Lines of `text` numbered as the disk `read` numbers them, with the same bounds."""
    lines = text.splitlines()
    total = len(lines)
    offset = max(1, offset)
    limit = max(1, min(limit or MAX_LINES, MAX_LINES))
    if total and offset > total:
        raise ToolError(f"offset {offset} is past the end of {rel}: it has {total} lines")
    shown: list[str] = []
    size = 0
    for n in range(offset, min(total, offset + limit - 1) + 1):
        line = lines[n - 1]
        if len(line) > LINE_CHARS:
            line = line[:LINE_CHARS] + " " + line_cut(len(line), "characters")
        entry = f"{n:>6}\t{line}"
        if shown and size + len(entry) > MAX_BYTES:
            break
        shown.append(entry)
        size += len(entry) + 1
    result = lines_result(rel, shown, offset, total)
    result["source"] = "the editor's buffer (unsaved changes included)"
    return result
