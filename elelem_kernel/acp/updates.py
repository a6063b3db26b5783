"""A turn as ACP `session/update` notifications: the renderer of an ACP session.

The session's block events become chunks (`agent_thought_chunk`, `agent_message_chunk`),
tool calls (`tool_call`, then `tool_call_update` as they run and end) with ACP's kind, a
title, the files they touch (`locations`, so an editor can follow along), their result
as text and, for `write`, `edit` and `notebook_edit`, a diff of the file before and after.
A reply that holds a checklist (`- [ ] step`) is also sent as a `plan`; the end of the
turn sends the context window's use (`usage_update`, to clients that know it).

A model's call ids are its own (many servers number them from `call_0` in every reply), so
each call gets a `toolCallId` of its own for the client, unique in the session. A call
still open when the turn ends (cancelled while it asked or ran) is closed as failed. A
text that starts a new round is set apart from the one before. `session/load` replays a
saved turn through the same methods (`replay`), so titles, locations and diffs match.

The renderer is called synchronously, on the event loop or from a provider's worker
thread; updates go into a queue that one task sends in order, so a client sees them as
they happened and `drain` waits for the last one before the prompt's answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from elelem_kernel.acp.messages import (
    DiffItem,
    Json,
    Location,
    PlanEntry,
    SessionUpdate,
    ToolContent,
    ToolKind,
    agent_text,
    diff_content,
    location,
    plan,
    plan_entry,
    terminal_content,
    text_content,
    thought_text,
    tool_call,
    usage_update,
    user_text,
)
from elelem_kernel.agent.blocks import BlockEvent, BlockStart, TurnEnd
from elelem_kernel.agent.record import Meter, TurnRecord
from elelem_kernel.render.call_text import result_text, short_arguments
from elelem_kernel.sync import call_soon
from elelem_kernel.text import clip, shorten
from elelem_kernel.tools.workspace import Workspace

#: ACP tool kinds of the built-in tools, by name; others go by their own kind.
KINDS: dict[str, ToolKind] = {
    "read": "read",
    "notebook_read": "read",
    "variables": "read",
    "list": "search",
    "grep": "search",
    "write": "edit",
    "edit": "edit",
    "notebook_edit": "edit",
    "bash": "execute",
    "python": "execute",
    "notebook_run": "execute",
    "propose_cell": "other",
}
BY_TOOL_KIND: dict[str, ToolKind] = {"read": "read", "write": "edit", "execute": "execute"}
#: Tools whose changes are shown as a diff of the file they change.
DIFFED = ("write", "edit", "notebook_edit")
RESULT_CHARS = 20_000  #: characters of a tool result shown in the client
DIFF_BYTES = 1_000_000  #: files larger than this are not diffed
LOCATIONS = 20  #: locations listed for one call at most (a grep's matches)
#: Arguments that say what a call is about, before any other (a record keeps them sorted).
ABOUT = ("path", "command", "pattern", "query", "url", "code", "name")
_GREP_LINE = re.compile(r"^([^\n:]+):(\d+):", re.MULTILINE)
_CHECKLIST = re.compile(r"^\s*[-*]\s+\[( |x|X)\]\s+(.+)$", re.MULTILINE)

Send = Callable[[SessionUpdate], Awaitable[None]]
log = logging.getLogger("elelem_kernel.acp")


def acp_kind(name: str, kind: str | None) -> ToolKind:
    """The ACP kind of a call to tool `name` (of elelem kind `kind`, None if unknown)."""
    if name in KINDS:
        return KINDS[name]
    lowered = name.lower()
    if lowered.startswith("mcp__"):
        remote = lowered.rsplit("__", 1)[-1]
        named: tuple[tuple[str, ToolKind], ...] = (
            ("fetch", "fetch"),
            ("search", "search"),
            ("think", "think"),
        )
        for word, acp in named:
            if word in remote:
                return acp
    return BY_TOOL_KIND.get(kind or "", "other")


def title(name: str, arguments: Any) -> str:
    """A call in a few words: the tool and what it is about (`bash ls -la`)."""
    if isinstance(arguments, dict):
        arguments = {**{k: arguments[k] for k in ABOUT if k in arguments}, **arguments}
    about = short_arguments(arguments, 60)
    return f"{name} {about}" if about else name


def fenced(text: str) -> str:
    """`text` in a Markdown code fence its own backticks cannot close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


@dataclass
class Watched:
    """One call of the turn as the client knows it."""

    name: str
    arguments: dict[str, Any]
    kind: ToolKind
    path: Path | None = None  #: the file it changes or reads, resolved in the workspace
    before: str | None = None  #: that file's text before the call (changing tools)
    existed: bool = False


class Updates:
    """The renderer: session events in, ACP session updates sent in order."""

    def __init__(
        self,
        send: Send,
        workspace: Path,
        tool_kind: Callable[[str], str | None],
        usage: bool = True,
    ):
        self.send = send
        self.workspace = Workspace(workspace)
        self.tool_kind = tool_kind
        self.usage = usage  #: whether the client knows `usage_update`
        self.blocks: dict[int, str] = {}
        self.calls: dict[str, Watched] = {}  #: by the model's call id
        self.ids: dict[str, str] = {}  #: the model's call id -> the client's
        self.open: set[str] = set()  #: client ids of calls without a final status yet
        self.reply: list[str] = []
        self.running: str | None = None  #: the call running now (calls run one at a time)
        self.terminals: dict[str, str] = {}  #: call id -> the client terminal it ran in
        self.replaying = False  #: showing saved turns: the files are not as they were then
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._queue: asyncio.Queue[SessionUpdate | None] = asyncio.Queue()
        self._task = self._loop.create_task(self._pump())

    # -- the queue ------------------------------------------------------------------

    def put(self, update: SessionUpdate | None) -> None:
        """Queue an update from any thread."""
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(update)
        else:
            call_soon(self._loop, self._queue.put_nowait, update)

    async def _pump(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                if update is not None:
                    await self.send(update)
            except Exception as e:  # a client gone or refusing one update must not end the turn
                log.warning("could not send a %s update: %s", update and update["sessionUpdate"], e)
            finally:
                self._queue.task_done()
            if update is None:
                return

    async def flush(self) -> None:
        """Wait until everything queued so far has been sent."""
        await asyncio.sleep(0)
        await self._queue.join()

    def client_id(self, call_id: str) -> str:
        """The client's id of the model's call `call_id` (its latest one)."""
        return self.ids.get(call_id, call_id)

    def close_open(self, why: str = "cancelled") -> None:
        """Give every call still open its final status: failed, for `why`."""
        for client_id in sorted(self.open):
            self.put(tool_call(client_id, status="failed", content=[text_content(why)]))
        self.open.clear()

    async def drain(self) -> None:
        """Send everything queued, then stop the sender."""
        await asyncio.sleep(0)  # let updates queued from worker threads arrive
        self.put(None)
        await self._task

    # -- events ---------------------------------------------------------------------

    def __call__(self, event: BlockEvent) -> None:
        if event["type"] == "block_start":
            self._start(event)
        elif event["type"] == "block_delta":
            text = str(event.get("text", ""))
            if self.blocks.get(event.get("index", -1)) == "thinking":
                self.put(thought_text(text))
            elif text:
                self.reply.append(text)
                self.put(agent_text(text))
        elif event["type"] == "tool_state" and event.get("state") == "running":
            self.running = str(event.get("id"))
            self.put(tool_call(self.client_id(self.running), status="in_progress"))
        elif event["type"] == "notice":
            self.put(agent_text(f"_{event.get('text', '')}_\n\n"))
        elif event["type"] == "compaction":
            turns = event.get("turns")
            self.put(thought_text(f"(compacted {turns} earlier turns)\n"))
        elif event["type"] == "turn_end":
            self._end(event)

    def _start(self, event: BlockStart) -> None:
        block = event.get("block")
        index = event.get("index", -1)
        self.blocks[index] = str(block)
        if block == "text" and self.reply and not self.reply[-1].endswith("\n\n"):
            self.reply.append("\n\n")  # a new round's text: not run into the last one's
            self.put(agent_text("\n\n"))
        if block == "tool_use":
            self._tool_use(str(event.get("id")), str(event.get("name")), event.get("arguments"))
        elif block == "tool_result":
            self._tool_result(str(event.get("id")), bool(event.get("ok")), event.get("content"))

    def _tool_use(self, call_id: str, name: str, arguments: Any) -> None:
        arguments = arguments if isinstance(arguments, dict) else {}
        kind: ToolKind = acp_kind(name, self.tool_kind(name))
        if name == "notebook_edit" and arguments.get("delete"):
            kind = "delete"
        elif name == "notebook_edit" and arguments.get("move_to") is not None:
            kind = "move"
        watched = Watched(name, arguments, kind, self._path(arguments.get("path")))
        if name in DIFFED and watched.path is not None and not self.replaying:
            watched.existed = watched.path.is_file()
            watched.before = file_text(watched.path)
        self.calls[call_id] = watched
        client_id = self.ids[call_id] = f"{call_id[:40]}-{uuid.uuid4().hex[:12]}"
        self.open.add(client_id)
        self.put(
            tool_call(
                client_id,
                start=True,
                title=title(name, arguments),
                kind=kind,
                status="pending",
                locations=self.locations(watched),
                raw_input=arguments,
            )
        )

    def terminal(self, terminal_id: str) -> None:
        """The running call runs in the client's terminal `terminal_id`: show it live."""
        if self.running is not None:
            self.terminals[self.running] = terminal_id
            self.put(
                tool_call(self.client_id(self.running), content=[terminal_content(terminal_id)])
            )

    def _tool_result(self, call_id: str, ok: bool, content: Any) -> None:
        watched = self.calls.get(call_id)
        text = result_text(content)
        text = clip(text, RESULT_CHARS, "\n")
        shown: list[ToolContent] = [text_content(fenced(text) if text.strip() else "(no output)")]
        if call_id in self.terminals:
            shown.insert(0, terminal_content(self.terminals[call_id]))
        locations = None
        if watched is not None and ok:
            diff = self.diff_recorded(watched) if self.replaying else self.diff_after(watched)
            if diff is not None:
                shown.insert(0, diff)
            if watched.name == "grep":
                locations = self._grep_locations(text)
        client_id = self.client_id(call_id)
        self.open.discard(client_id)
        self.put(
            tool_call(
                client_id,
                status="completed" if ok else "failed",
                content=shown,
                locations=locations,
                raw_output=_json(content),
            )
        )

    def _end(self, event: TurnEnd) -> None:
        error = event.get("error")
        if error and event.get("stop") != "max_rounds":
            self.put(agent_text(f"\n\n**Error:** {error}"))
        elif error:
            self.put(agent_text(f"\n\n_{error}_"))
        entries = checklist("".join(self.reply))
        if entries:
            self.put(plan(entries))
        context = event.get("context") or Meter()
        used, size = context.get("used"), context.get("window")
        if not self.usage:
            return
        if isinstance(used, int) and isinstance(size, int) and used >= 0 and size > 0:
            cost = event.get("cost")
            self.put(usage_update(used, size, cost if isinstance(cost, float) else None))

    def replay(self, turns: list[TurnRecord]) -> None:
        """Saved turns (records) as their live updates were: the same events, in order."""
        self.replaying = True
        for turn in turns:
            self.reply.clear()
            self.put(user_text(str(turn.get("prompt", ""))))
            rounds = turn.get("rounds") or []
            for round_ in rounds:
                said: tuple[tuple[Literal["thinking", "text"], object], ...] = (
                    ("thinking", round_.get("thinking")),
                    ("text", round_.get("text")),
                )
                for block, text in said:
                    if text:
                        self({"type": "block_start", "index": -1, "block": block})
                        self({"type": "block_delta", "index": -1, "text": str(text)})
                for call in round_.get("calls") or []:
                    call_id, name = str(call.get("id")), str(call.get("name"))
                    self._tool_use(call_id, name, call.get("arguments"))
                    if call.get("ok") is not None:
                        self._tool_result(call_id, bool(call.get("ok")), call.get("result"))
            if not rounds and turn.get("reply"):
                self.put(agent_text(str(turn["reply"])))
            self.close_open("not finished")

    # -- files ----------------------------------------------------------------------

    def _path(self, value: Any) -> Path | None:
        if not isinstance(value, str) or not value.strip():
            return None
        try:
            return self.workspace.resolve(value)
        except Exception:  # outside the workspace: the tool refuses it, nothing to show
            return None

    def locations(self, watched: Watched) -> list[Location] | None:
        """Where the call reads or changes a file: the file, and the line when known."""
        if watched.path is None:
            return None
        line = None
        args = watched.arguments
        if watched.name == "read" and isinstance(args.get("offset"), int):
            line = args["offset"]
        elif watched.name == "edit" and watched.before and isinstance(args.get("old"), str):
            at = watched.before.find(args["old"]) if args["old"] else -1
            line = watched.before.count("\n", 0, at) + 1 if at >= 0 else None
        return [location(str(watched.path), line)]

    def _grep_locations(self, text: str) -> list[Location] | None:
        found = []
        for match in _GREP_LINE.finditer(text):
            path = self._path(match.group(1))
            if path is not None and path.is_file():
                found.append(location(str(path), int(match.group(2))))
            if len(found) == LOCATIONS:
                break
        return found or None

    def diff_before(self, call_id: str) -> DiffItem | None:
        """The diff a changing call would make, for its permission request (or None)."""
        watched = self.calls.get(call_id)
        if watched is None or watched.path is None:
            return None
        args = watched.arguments
        if watched.name == "write" and isinstance(args.get("content"), str):
            return diff_content(str(watched.path), args["content"], watched.before)
        if watched.name == "edit" and watched.before is not None:
            old, new = args.get("old"), args.get("new")
            if isinstance(old, str) and isinstance(new, str) and old and old in watched.before:
                count = -1 if args.get("replace_all") else 1
                after = watched.before.replace(old, new, count)
                return diff_content(str(watched.path), after, watched.before)
        return None

    def diff_recorded(self, watched: Watched) -> DiffItem | None:
        """A saved call's change as its arguments say it (the file has moved on since)."""
        args = watched.arguments
        if watched.path is None:
            return None
        if watched.name == "write" and isinstance(args.get("content"), str):
            return diff_content(str(watched.path), args["content"], None)
        old, new = args.get("old"), args.get("new")
        if watched.name == "edit" and isinstance(old, str) and isinstance(new, str):
            return diff_content(str(watched.path), new, old)
        return None

    def diff_after(self, watched: Watched) -> DiffItem | None:
        if watched.name not in DIFFED or watched.path is None:
            return None
        after = file_text(watched.path)
        if after is None or after == watched.before:
            return None
        return diff_content(str(watched.path), after, watched.before if watched.existed else None)


def file_text(path: Path) -> str | None:
    """A file's text as a diff shows it (a notebook as its cells), None when there is none."""
    try:
        if not path.is_file() or path.stat().st_size > DIFF_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    text = data.decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        return notebook_text(text)
    return text


def notebook_text(text: str) -> str:
    """A notebook's cells as readable text (`# %% [code] id` then the source), else `text`."""
    try:
        cells = json.loads(text).get("cells", [])
        parts = []
        for cell in cells:
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            parts.append(f"# %% [{cell.get('cell_type', '?')}] {cell.get('id', '')}\n{source}")
        return "\n\n".join(parts) + "\n"
    except (ValueError, AttributeError, TypeError):
        return text


def checklist(reply: str) -> list[PlanEntry]:
    """The reply's Markdown task list (`- [ ] step`, `- [x] done`) as plan entries."""
    entries = []
    for match in _CHECKLIST.finditer(reply):
        done = match.group(1) != " "
        entries.append(
            plan_entry(shorten(match.group(2).strip(), 300), "completed" if done else "pending")
        )
    return entries


def _json(content: Json) -> Json:
    """A tool's result as the client is shown it: the JSON it holds, else its text."""
    if isinstance(content, str):
        try:
            value: Json = json.loads(content)
        except ValueError:
            return content
        return value
    return content
