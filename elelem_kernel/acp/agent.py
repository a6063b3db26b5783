"""The ACP agent: each ACP session is one `Session`; each prompt is one turn.

`session/new` makes a session in the client's working directory (its workspace is that
folder's git root, as on the command line) with the client's MCP servers beside the
person's own; `session/prompt` runs a turn whose events reach the client as
`session/update` (see updates.py) and whose approvals are `session/request_permission`
(approval.py); `session/cancel` ends the turn as the stop button does. Modes are ACP
session modes, the provider a config option, slash commands are advertised and run as
prompts (`/mode plan`). A session is saved as a notebook from `session/new` on, and every
turn is appended to it (store/acp_sessions.py); `session/load` restores it in any later process,
replayed through the live renderer (updates.py), mode included.

A prompt sent while a cancelled turn winds down waits for it; one sent while a turn runs
is refused. When the client goes away the running turns are cancelled (`close`).

Bad input is a JSON-RPC error whose message says what is wrong; nothing but protocol
goes to stdout (see `serve`).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.acp.client import AcpClient
from elelem_kernel.acp.editor_files import ClientFiles
from elelem_kernel.acp.editor_terminal import ClientTerminal
from elelem_kernel.acp.hello import Offers
from elelem_kernel.acp.jsonrpc import INVALID_REQUEST, RESOURCE_NOT_FOUND
from elelem_kernel.acp.messages import (
    Command,
    ConfigOption,
    Modes,
    PromptResult,
    SessionInfo,
    SessionResult,
    SessionUpdate,
    StopReason,
    Usage,
    agent_text,
    commands_update,
    config_update,
    mode_update,
)
from elelem_kernel.acp.params import Params, invalid
from elelem_kernel.acp.permission_request import AcpApprover
from elelem_kernel.acp.prompt_content import PromptError, read_prompt, refusal
from elelem_kernel.acp.updates import Updates, fenced
from elelem_kernel.agent import registry
from elelem_kernel.agent.front import PlainFront, TurnSettings
from elelem_kernel.agent.record import new_id
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import MODES
from elelem_kernel.errors import ElelemError, RpcError
from elelem_kernel.images import ImageEntry
from elelem_kernel.render.static import bundle
from elelem_kernel.store import acp_sessions

if TYPE_CHECKING:
    from elelem_kernel.acp.messages import Json

log = logging.getLogger("elelem_kernel.acp")

MODE_TEXT = {
    "plan": ("Plan", "read only: the agent looks and proposes, changes nothing"),
    "build": ("Build", "read and write files; each write asks first"),
    "verify": ("Verify", "read and run commands; each command asks first"),
    "auto": ("Auto", "every tool, nothing asked"),
}
#: How ACP's stop reasons are named for the session's.
STOPS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "context_full": "max_tokens",
    "max_rounds": "max_turn_requests",
    "interrupted": "cancelled",
}
_NAME = re.compile(r"[^A-Za-z0-9-]+")  #: runs replaced by one "_" in MCP server names


@dataclass
class Live:
    """One ACP session of this process."""

    id: str
    cwd: str
    session: Session
    turn: asyncio.Task[Any] | None = None
    updates: Updates | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)  #: no prompt being answered
    cancelled: bool = False  #: the running turn was cancelled: a new prompt may wait

    def __post_init__(self) -> None:
        self.idle.set()


class ElelemAgent:
    """The ACP `Agent`: sessions by id, each with its turn."""

    def __init__(self, defaults: dict[str, Any], client: AcpClient):
        #: `new_session` keywords from the command line (provider, model, mode, options).
        self.defaults = dict(defaults)
        self.client = client
        self.offers = Offers()  #: what the client said in `initialize` it can do
        self.sessions: dict[str, Live] = {}
        #: The clients' MCP servers by name, shared by this process's sessions (one hub).
        self.client_servers: dict[str, Any] = {}
        self._sending: set[asyncio.Task[None]] = set()  #: updates sent after a response
        #: Every provider a session may switch to, plugin packages' too: found after the
        #: first turn (their entry points take a scan of every installed package, which
        #: `session/new` and the first answer should not wait for); till then, the
        #: registered ones.
        self.every_provider: list[str] | None = None

    async def new_session(self, cwd: str, mcp_servers: list[Params]) -> SessionResult:
        live = self._make(uuid.uuid4().hex, cwd, mcp_servers)
        try:  # saved now: a client may prompt it from another process
            acp_sessions.create(live.id, live.cwd, live.session.mode)
        except (ElelemError, OSError) as e:
            log.warning("the session was not saved: %s", e)
        self._announce(live)
        return {
            "sessionId": live.id,
            "modes": self._modes(live),
            "configOptions": self._options(live),
        }

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Params]
    ) -> SessionResult:
        try:
            saved = acp_sessions.load(session_id)
        except ValueError as e:
            raise invalid(str(e)) from None
        except ElelemError as e:
            raise RpcError(RESOURCE_NOT_FOUND, str(e)) from None
        if session_id in self.sessions and self.sessions[session_id].turn is not None:
            raise RpcError(INVALID_REQUEST, f"session {session_id} is running a turn")
        live = self._make(session_id, cwd, mcp_servers)
        live.session.load(saved.rebuilt.conversations, saved.rebuilt.active)
        if saved.mode in MODES:
            live.session.set_mode(saved.mode)
        for warning in saved.warnings:
            log.warning("%s", warning)
        view = self._updates(live)
        view.replay(list(live.session.conversation.turns))
        await view.drain()
        self._announce(live)
        return {"modes": self._modes(live), "configOptions": self._options(live)}

    async def list_sessions(self, cwd: str | None = None) -> dict[str, list[SessionInfo]]:
        sessions: list[SessionInfo] = []
        for saved in acp_sessions.listing():
            if cwd is not None and saved["cwd"] != cwd:
                continue
            info: SessionInfo = {"sessionId": saved["id"], "cwd": saved["cwd"] or ""}
            if saved["title"]:
                info["title"] = saved["title"]
            if saved["updated"]:
                info["updatedAt"] = saved["updated"]
            sessions.append(info)
        return {"sessions": sessions}

    def _make(self, session_id: str, cwd: str, mcp_servers: list[Params]) -> Live:
        from elelem_kernel.assembly.sessions import new_session  # lazy: registry and providers

        folder = Path(cwd) if isinstance(cwd, str) and cwd else None
        if folder is None or not folder.is_absolute() or not folder.is_dir():
            raise invalid(f"cwd must be the absolute path of an existing folder, not {cwd!r}")
        servers = self._client_servers(mcp_servers, folder)
        live = Live(session_id, str(folder), None)  # type: ignore[arg-type]
        options = dict(self.defaults)
        try:
            approver = AcpApprover(self.client, session_id, lambda: live.updates)
            front = PlainFront(  # a cell goes to the client as a message, a notice to the log
                TurnSettings(approver),
                propose=lambda source: self._propose(live, source),
                tell=lambda text: log.info("%s", text),
            )
            session = new_session(workspace=folder, front=front, **options)
        except ElelemError as e:
            raise invalid(str(e)) from None
        reads, writes = self.offers.reads, self.offers.writes
        if reads or writes:
            files = ClientFiles(self.client, session_id, lambda: session.workspace, reads, writes)
            session.toolbox.add_toolset(files.toolset())
        if self.offers.terminal:
            terminal = ClientTerminal(
                self.client, session_id, lambda: session.workspace, lambda: live.updates
            )
            session.toolbox.add_toolset(terminal.toolset())
        mcp = session.mcp
        if mcp is not None:
            mcp.serve_also(self.client_servers)
        elif servers:
            log.warning("the client's MCP servers are not used: the mcp setup is not loaded")
        live.session = session
        self.sessions[session_id] = live
        return live

    def _client_servers(self, servers: list[Params], folder: Path) -> list[str]:
        """Add the client's MCP servers (stdio, http, sse) to the shared ones; their names.

        Their values are taken as written: `${VAR}` is not filled from this environment."""
        from elelem_kernel.mcp import config  # lazy: only when a client sends servers
        from elelem_kernel.mcp.attachment import sdk_installed

        if servers and not sdk_installed():  # on stderr: not a notice in every chat
            log.warning("the client's MCP servers are skipped: they need the MCP SDK 2.x")
            return []
        names = []
        for server in servers:
            given = server.text("name")
            name = _NAME.sub("_", given or "client").strip("_")[:60] or "client"
            entry: dict[str, object]
            if "command" in server.values:
                entry = {
                    "command": server.text("command"),
                    "args": server.texts("args"),
                    "env": server.pairs("env"),
                }
            else:
                entry = {
                    "type": server.maybe_text("type") or "http",
                    "url": server.text("url"),
                    "headers": server.pairs("headers"),
                }
            try:
                self.client_servers[name] = config.parse(
                    name, entry, "the ACP client's mcpServers", None, folder, literal=True
                )
            except ValueError as e:
                raise invalid(f"mcpServers: server {given!r}: {e}") from None
            names.append(name)
        return names

    def _propose(self, live: Live, source: str) -> None:
        if live.updates is not None:
            live.updates.put(agent_text(f"\n\n{fenced(source)}\n\n"))

    def _announce(self, live: Live) -> None:
        """Send the slash commands once the session exists for the client."""
        commands: list[Command] = []
        for name in live.session.commands.names():
            command = live.session.commands.commands[name]
            hint = command.usage.partition(" ")[2]
            offered: Command = {"name": name, "description": command.description}
            if hint:
                offered["input"] = {"hint": hint}
            commands.append(offered)
        self._later(self._send(live.id, commands_update(commands)))

    def _later(self, work: Coroutine[object, object, None]) -> None:
        """Run `work` after the answer being given now."""
        task = asyncio.get_running_loop().create_task(work)
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, session_id: str, update: SessionUpdate) -> None:
        try:
            await self.client.session_update(session_id, update)
        except Exception as e:  # the client went away
            log.warning("could not send an update: %s", e)

    # -- modes and options ------------------------------------------------------------

    def _modes(self, live: Live) -> Modes:
        return {
            "currentModeId": live.session.mode,
            "availableModes": [
                {"id": m, "name": MODE_TEXT[m][0], "description": MODE_TEXT[m][1]}
                for m in live.session.policy.allowed_modes()
            ],
        }

    def _options(self, live: Live) -> list[ConfigOption]:
        session = live.session
        names = self.every_provider
        if names is None:  # those of the catalog new_session used (the registry)
            names = sorted(registry.CONFIG.providers)
        providers = [p for p in names if session.policy.allows_provider(p)]
        if session.provider_name not in providers:
            providers = [session.provider_name, *providers]
        return [
            {
                "type": "select",
                "id": "mode",
                "name": "Mode",
                "category": "mode",
                "currentValue": session.mode,
                "options": [
                    {"value": m, "name": MODE_TEXT[m][0]} for m in session.policy.allowed_modes()
                ],
            },
            {
                "type": "select",
                "id": "provider",
                "name": "Provider",
                "description": f"model: {session.model or 'the provider default'} (/model NAME)",
                "category": "model",
                "currentValue": session.provider_name,
                "options": [{"value": p, "name": p} for p in providers],
            },
        ]

    async def set_session_mode(self, session_id: str, mode_id: str) -> dict[str, object]:
        live = self._live(session_id)
        if mode_id not in MODES:
            raise invalid(f"unknown mode {mode_id!r}; modes: {', '.join(MODES)}")
        _set_mode(live.session, mode_id)
        self._remember_mode(live)
        return {}

    async def set_config_option(
        self, session_id: str, config_id: str, value: str | bool
    ) -> dict[str, list[ConfigOption]]:
        live = self._live(session_id)
        if config_id == "mode":
            if value not in MODES:
                raise invalid(f"unknown mode {value!r}; modes: {', '.join(MODES)}")
            _set_mode(live.session, value)
            self._remember_mode(live)
        elif config_id == "provider":
            if live.turn is not None:
                raise RpcError(INVALID_REQUEST, "the provider cannot change while a turn runs")
            try:
                live.session.set_provider(str(value))
            except ElelemError as e:
                raise invalid(str(e)) from None
        else:
            raise invalid(f"unknown config option {config_id!r}; options: mode, provider")
        await self._send(live.id, mode_update(live.session.mode))
        return {"configOptions": self._options(live)}

    def _remember_mode(self, live: Live) -> None:
        try:
            acp_sessions.remember_mode(live.id, live.session.mode)
        except OSError as e:
            log.warning("the session's mode was not saved: %s", e)

    # -- turns ------------------------------------------------------------------------

    def _live(self, session_id: str) -> Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"unknown session {session_id!r}: create one with session/new, or "
                "session/load a saved one",
            )
        return live

    async def prompt(self, session_id: str, prompt: list[Json]) -> PromptResult:
        live = self._live(session_id)
        try:  # read first: no await (fitting images takes seconds) after the idle check
            asked = await read_prompt(prompt)
            problem = await refusal(live.session, asked.images)
        except (PromptError, ElelemError) as e:
            raise invalid(str(e)) from None
        if problem:
            raise invalid(problem)
        while not live.idle.is_set():
            if not live.cancelled:
                raise RpcError(
                    INVALID_REQUEST,
                    "a turn is already running in this session: wait for its answer or "
                    "send session/cancel",
                )
            await live.idle.wait()  # the cancelled turn is winding down: then this one
        text = asked.text
        if not asked.images and text.lstrip().startswith("/") and "\n" not in text.strip():
            return await self._command(live, text.strip())
        live.idle.clear()
        live.cancelled = False
        try:
            return await self._turn(live, text, asked.images)
        finally:
            live.idle.set()

    def _updates(self, live: Live) -> Updates:
        session = live.session
        return Updates(
            lambda update: self.client.session_update(live.id, update),
            session.workspace,
            lambda name: getattr(session.toolbox.get(name), "kind", None),
            usage=self.offers.usage,
        )

    async def _turn(
        self, live: Live, text: str, images: list[ImageEntry] | None = None
    ) -> PromptResult:
        """Run the turn, send its last updates, save it; answer. When the connection
        closes meanwhile, the turn is cancelled and saved, and nothing is answered."""
        updates = live.updates = self._updates(live)
        live.turn = asyncio.get_running_loop().create_task(
            live.session.turn(text, updates, cell=new_id(), images=images)
        )
        closing = False
        try:
            result = await asyncio.shield(live.turn)
        except asyncio.CancelledError:  # the connection is closing: end the turn too
            closing = True
            live.turn.cancel()
            result = await live.turn
        finally:
            live.turn = None
        updates.close_open("cancelled" if result.stop == "interrupted" else "not finished")
        await updates.drain()
        live.updates = None
        try:
            acp_sessions.save_turn(
                live.id, live.cwd, result.record, *bundle(result.record), live.session.mode
            )
        except (ElelemError, OSError) as e:
            log.warning("the turn was not saved: %s", e)
            await self._send(live.id, agent_text(f"\n\n_not saved: {e}_"))
        if closing:
            raise asyncio.CancelledError
        answer: PromptResult = {"stopReason": stop_reason(result.stop, result.error)}
        counted = usage(result.usage)
        if counted is not None:
            answer["usage"] = counted
        if self.every_provider is None:
            self._later(self._every_provider(live))
        return answer

    async def _every_provider(self, live: Live) -> None:
        """Find every provider (after the turn's answer, on a worker thread: the plugin
        and entry point scan takes ~50 ms); tell the sessions of those the registry did
        not know."""
        await asyncio.sleep(0)  # the answer goes first
        if self.every_provider is not None:
            return
        names = await asyncio.to_thread(live.session.facts.provider_names)
        if self.every_provider is not None:  # another turn's scan ended first
            return
        # the options with the registry's names and with every name, at one moment: a
        # mode or provider changed during the scan was told by its own update
        before = {key: self._options(other) for key, other in self.sessions.items()}
        self.every_provider = names
        for key, other in list(self.sessions.items()):
            options = self._options(other)
            if options != before.get(key):
                await self._send(key, config_update(options))

    async def _command(self, live: Live, line: str) -> PromptResult:
        """A slash command; a changed mode or provider is told to the client too."""
        session = live.session
        before = (session.mode, session.provider_name)
        answer = session.command(line)
        await self._send(live.id, agent_text(answer))
        if session.mode != before[0]:
            self._remember_mode(live)
            await self._send(live.id, mode_update(session.mode))
        if (session.mode, session.provider_name) != before:
            await self._send(live.id, config_update(self._options(live)))
        return {"stopReason": "end_turn"}

    async def cancel(self, session_id: str) -> None:
        live = self.sessions.get(session_id)
        if live is not None and not live.idle.is_set():
            live.cancelled = True
            if live.turn is not None:
                live.turn.cancel()

    async def close(self, grace: float) -> None:
        """The client has gone: cancel the running turns, and give them `grace` seconds."""
        turns = [live.turn for live in self.sessions.values() if live.turn is not None]
        for turn in turns:
            turn.cancel()
        if turns:
            await asyncio.wait(turns, timeout=grace)


def _set_mode(session: Session, mode: str) -> None:
    """Switch `session` to `mode`; the site policy's refusal is an invalid request."""
    try:
        session.set_mode(mode)
    except ElelemError as e:
        raise invalid(str(e)) from None


def stop_reason(stop: str, error: str | None) -> StopReason:
    """ACP's stop reason for a turn's: a model's refusal is an `error` stop with no message."""
    if stop == "error":
        return "end_turn" if error else "refusal"
    return STOPS.get(stop, "end_turn")


def usage(counted: dict[str, int]) -> Usage | None:
    """The turn's tokens in ACP's terms."""
    if not counted:
        return None
    read_in, write_in = counted.get("cache_read"), counted.get("cache_write")
    total = sum(
        v for v in (counted.get("input", 0), counted.get("output", 0)) if isinstance(v, int)
    )
    tokens: Usage = {
        "inputTokens": int(counted.get("input", 0)),
        "outputTokens": int(counted.get("output", 0)),
        "totalTokens": total,
    }
    if isinstance(read_in, int):
        tokens["cachedReadTokens"] = read_in
    if isinstance(write_in, int):
        tokens["cachedWriteTokens"] = write_in
    return tokens
