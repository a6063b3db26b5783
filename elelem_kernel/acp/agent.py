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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError, update_agent_message_text
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    ClientCapabilities,
    ConfigOptionUpdate,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    UnstructuredCommandInput,
    Usage,
)

from elelem_kernel.acp.editor_files import ClientFiles
from elelem_kernel.acp.editor_terminal import ClientTerminal
from elelem_kernel.acp.hello import initialize_result
from elelem_kernel.acp.permission_request import AcpApprover
from elelem_kernel.acp.prompt_content import PromptError, read_prompt, refusal
from elelem_kernel.acp.updates import Updates, fenced
from elelem_kernel.agent.front import PlainFront, TurnSettings
from elelem_kernel.agent.record import new_id
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import MODES
from elelem_kernel.errors import ElelemError
from elelem_kernel.images import ImageEntry
from elelem_kernel.render.static import bundle
from elelem_kernel.store import acp_sessions

log = logging.getLogger("elelem_kernel.acp")

MODE_TEXT = {
    "plan": ("Plan", "read only: the agent looks and proposes, changes nothing"),
    "build": ("Build", "read and write files; each write asks first"),
    "verify": ("Verify", "read and run commands; each command asks first"),
    "auto": ("Auto", "every tool, nothing asked"),
}
#: How ACP's stop reasons are named for the session's.
STOPS = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "context_full": "max_tokens",
    "max_rounds": "max_turn_requests",
    "interrupted": "cancelled",
}
_NAME = re.compile(r"[^A-Za-z0-9-]+")  #: runs replaced by one "_" in MCP server names


def invalid(message: str) -> RequestError:
    """A JSON-RPC "invalid params" error whose message says what is wrong."""
    return RequestError(-32602, message)


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

    def __init__(self, defaults: dict[str, Any] | None = None):
        #: `new_session` keywords from the command line (provider, model, mode, options).
        self.defaults = dict(defaults or {})
        self.client: Any = None
        self.capabilities: Any = None
        self.usage_updates = False  #: whether the client knows `usage_update`
        self.sessions: dict[str, Live] = {}
        #: The clients' MCP servers by name, shared by this process's sessions (one hub).
        self.client_servers: dict[str, Any] = {}
        self._sending: set[asyncio.Task[None]] = set()  #: updates sent after a response

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    # -- lifecycle --------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities
        self.usage_updates = knows_usage(client_capabilities)
        return InitializeResponse.model_validate(initialize_result(protocol_version))

    def remember_client(self, params: dict[str, Any]) -> None:
        """What the client said in the `initialize` that `serve` answered early."""
        try:
            capabilities = ClientCapabilities.model_validate(params.get("clientCapabilities") or {})
        except ValueError:  # pydantic's ValidationError is one: such a client offers nothing
            capabilities = None
        self.capabilities = capabilities
        self.usage_updates = knows_usage(capabilities)

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise invalid(
            "elelem needs no authentication: model keys come from the environment "
            "(ANTHROPIC_API_KEY, OPENAI_API_KEY, ...)"
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        live = self._make(uuid.uuid4().hex, cwd, mcp_servers)
        try:  # saved now: a client may prompt it from another process
            acp_sessions.create(live.id, live.cwd, live.session.mode)
        except (ElelemError, OSError) as e:
            log.warning("the session was not saved: %s", e)
        self._announce(live)
        return NewSessionResponse(
            session_id=live.id, modes=self._modes(live), config_options=self._options(live)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        try:
            saved = acp_sessions.load(session_id)
        except ValueError as e:
            raise invalid(str(e)) from None
        except ElelemError as e:
            raise RequestError(-32002, str(e)) from None
        if session_id in self.sessions and self.sessions[session_id].turn is not None:
            raise RequestError(-32600, f"session {session_id} is running a turn")
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
        return LoadSessionResponse(modes=self._modes(live), config_options=self._options(live))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        found = [s for s in acp_sessions.listing() if cwd is None or s["cwd"] == cwd]
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s["id"],
                    cwd=s["cwd"] or "",
                    title=s["title"] or None,
                    updated_at=s["updated"],
                )
                for s in found
            ]
        )

    def _make(self, session_id: str, cwd: str, mcp_servers: list[Any] | None) -> Live:
        from elelem_kernel.assembly.sessions import new_session  # lazy: registry and providers

        folder = Path(cwd) if isinstance(cwd, str) and cwd else None
        if folder is None or not folder.is_absolute() or not folder.is_dir():
            raise invalid(f"cwd must be the absolute path of an existing folder, not {cwd!r}")
        servers = self._client_servers(mcp_servers or [], folder)
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
        fs = getattr(self.capabilities, "fs", None)
        reads, writes = (
            bool(getattr(fs, "read_text_file", False)),
            bool(getattr(fs, "write_text_file", False)),
        )
        if reads or writes:
            files = ClientFiles(self.client, session_id, lambda: session.workspace, reads, writes)
            session.toolbox.add_toolset(files.toolset())
        if getattr(self.capabilities, "terminal", False):
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

    def _client_servers(self, servers: list[Any], folder: Path) -> list[str]:
        """Add the client's MCP servers (stdio, http, sse) to the shared ones; their names.

        Their values are taken as written: `${VAR}` is not filled from this environment."""
        from elelem_kernel.mcp import config  # lazy: only when a client sends servers
        from elelem_kernel.mcp.attachment import sdk_installed

        if servers and not sdk_installed():  # on stderr: not a notice in every chat
            log.warning("the client's MCP servers are skipped: they need the MCP SDK 2.x")
            return []
        names = []
        for server in servers:
            data = server.model_dump() if hasattr(server, "model_dump") else dict(server)
            name = _NAME.sub("_", str(data.get("name") or "client")).strip("_")[:60] or "client"
            if "command" in data:
                entry: dict[str, Any] = {
                    "command": data["command"],
                    "args": list(data.get("args") or []),
                    "env": {e["name"]: e["value"] for e in data.get("env") or []},
                }
            else:
                entry = {
                    "type": data.get("type") or "http",
                    "url": data.get("url"),
                    "headers": {h["name"]: h["value"] for h in data.get("headers") or []},
                }
            try:
                self.client_servers[name] = config.parse(
                    name, entry, "the ACP client's mcpServers", None, folder, literal=True
                )
            except ValueError as e:
                raise invalid(f"mcpServers: server {data.get('name')!r}: {e}") from None
            names.append(name)
        return names

    def _propose(self, live: Live, source: str) -> None:
        if live.updates is not None:
            live.updates.put(update_agent_message_text(f"\n\n{fenced(source)}\n\n"))

    def _announce(self, live: Live) -> None:
        """Send the slash commands once the session exists for the client."""
        commands = []
        for name in live.session.commands.names():
            command = live.session.commands.commands[name]
            hint = command.usage.partition(" ")[2]
            commands.append(
                AvailableCommand(
                    name=name,
                    description=command.description,
                    input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
                    if hint
                    else None,
                )
            )
        update = update_available_commands(commands)
        task = asyncio.get_running_loop().create_task(self._send(live.id, update))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, session_id: str, update: Any) -> None:
        try:
            await self.client.session_update(session_id=session_id, update=update)
        except Exception as e:  # the client went away
            log.warning("could not send an update: %s", e)

    # -- modes and options ------------------------------------------------------------

    def _modes(self, live: Live) -> SessionModeState:
        return SessionModeState(
            current_mode_id=live.session.mode,
            available_modes=[
                SessionMode(id=m, name=MODE_TEXT[m][0], description=MODE_TEXT[m][1])
                for m in live.session.policy.allowed_modes()
            ],
        )

    def _options(self, live: Live) -> list[Any]:
        session = live.session
        providers = [p for p in session.facts.provider_names() if session.policy.allows_provider(p)]
        if session.provider_name not in providers:
            providers = [session.provider_name, *providers]
        return [
            SessionConfigOptionSelect(
                type="select",
                id="mode",
                name="Mode",
                category="mode",
                current_value=session.mode,
                options=[
                    SessionConfigSelectOption(value=m, name=MODE_TEXT[m][0])
                    for m in session.policy.allowed_modes()
                ],
            ),
            SessionConfigOptionSelect(
                type="select",
                id="provider",
                name="Provider",
                description=f"model: {session.model or 'the provider default'} (/model NAME)",
                category="model",
                current_value=session.provider_name,
                options=[SessionConfigSelectOption(value=p, name=p) for p in providers],
            ),
        ]

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        live = self._live(session_id)
        if mode_id not in MODES:
            raise invalid(f"unknown mode {mode_id!r}; modes: {', '.join(MODES)}")
        _set_mode(live.session, mode_id)
        self._remember_mode(live)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        live = self._live(session_id)
        if config_id == "mode":
            if value not in MODES:
                raise invalid(f"unknown mode {value!r}; modes: {', '.join(MODES)}")
            _set_mode(live.session, value)
            self._remember_mode(live)
        elif config_id == "provider":
            if live.turn is not None:
                raise RequestError(-32600, "the provider cannot change while a turn runs")
            try:
                live.session.set_provider(str(value))
            except ElelemError as e:
                raise invalid(str(e)) from None
        else:
            raise invalid(f"unknown config option {config_id!r}; options: mode, provider")
        await self._send(live.id, update_current_mode(live.session.mode))
        return SetSessionConfigOptionResponse(config_options=self._options(live))

    def _remember_mode(self, live: Live) -> None:
        try:
            acp_sessions.remember_mode(live.id, live.session.mode)
        except OSError as e:
            log.warning("the session's mode was not saved: %s", e)

    # -- turns ------------------------------------------------------------------------

    def _live(self, session_id: str) -> Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError(
                -32002,
                f"unknown session {session_id!r}: create one with session/new, or "
                "session/load a saved one",
            )
        return live

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
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
                raise RequestError(
                    -32600,
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
            lambda update: self.client.session_update(session_id=live.id, update=update),
            session.workspace,
            lambda name: getattr(session.toolbox.get(name), "kind", None),
            usage=self.usage_updates,
        )

    async def _turn(
        self, live: Live, text: str, images: list[ImageEntry] | None = None
    ) -> PromptResponse:
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
            await self._send(live.id, update_agent_message_text(f"\n\n_not saved: {e}_"))
        if closing:
            raise asyncio.CancelledError
        return PromptResponse(
            stop_reason=stop_reason(result.stop, result.error),  # type: ignore[arg-type]
            usage=usage(result.usage),
        )

    async def _command(self, live: Live, line: str) -> PromptResponse:
        """A slash command; a changed mode or provider is told to the client too."""
        session = live.session
        before = (session.mode, session.provider_name)
        answer = session.command(line)
        await self._send(live.id, update_agent_message_text(answer))
        if session.mode != before[0]:
            self._remember_mode(live)
            await self._send(live.id, update_current_mode(session.mode))
        if (session.mode, session.provider_name) != before:
            update = ConfigOptionUpdate(
                session_update="config_option_update", config_options=self._options(live)
            )
            await self._send(live.id, update)
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
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


def knows_usage(capabilities: Any) -> bool:
    """Whether the client takes `usage_update`: ACP added it within protocol version 1, so
    clients built before it reject it (TypeScript SDK <= 0.13, Zed's older library). Those
    that advertise `session` capabilities, added to the schema after it, take it, as does
    a client that says so in its capabilities' `_meta` (`"usageUpdate": true`)."""
    if capabilities is None:
        return False
    meta = getattr(capabilities, "field_meta", None) or {}
    if isinstance(meta, dict) and meta.get("usageUpdate") is True:
        return True
    return getattr(capabilities, "session", None) is not None


def stop_reason(stop: str, error: str | None) -> str:
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
    return Usage(
        input_tokens=int(counted.get("input", 0)),
        output_tokens=int(counted.get("output", 0)),
        total_tokens=total,
        cached_read_tokens=read_in if isinstance(read_in, int) else None,
        cached_write_tokens=write_in if isinstance(write_in, int) else None,
    )
