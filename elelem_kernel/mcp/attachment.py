"""A session's MCP attachment: configured MCP servers' tools as a toolset of its toolbox,
and `/mcp`.

Before each turn the session asks its tool sources to refresh: the config files are read
again (cheap; a changed file restarts that server), servers not running start in parallel
on the hub, and the toolset's `mcp__*` tools become the running servers' tools.
Nothing starts and the `mcp` SDK is not imported while no server is configured. The
composition root attaches one to every session (`assembly/bundled.py`, the "mcp" setup).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent.toolbox import Tool
from elelem_kernel.errors import BadInput
from elelem_kernel.mcp import config as mcp_config
from elelem_kernel.mcp.config import PREFIX, ServerConfig
from elelem_kernel.redaction import forms_of, redact

if TYPE_CHECKING:
    from mcp.types import Tool as RemoteTool

    from elelem_kernel.mcp.connection import Link

INSTALL_HINT = "pip install 'elelem-kernel[mcp]'"


def sdk_installed() -> bool:
    """Whether the `mcp` SDK can be imported (found without importing it) and is 2.x: 1.x
    (which jupyter-ai 3 pins) has other client APIs."""
    # importlib.metadata imports email, zipfile, csv ...: only once MCP is configured
    import importlib.util
    from importlib.metadata import version

    try:
        if importlib.util.find_spec("mcp") is None:
            return False
        return int(version("mcp").split(".")[0]) >= 2
    except (ImportError, ValueError):
        return False


class McpTools:
    """The MCP side of one session: its servers' tools (a toolset: `agent/toolset.py`)
    and its `/mcp` command.

    `workspace()` is the session's workspace root, read at each use (a front may move it).
    """

    name = "mcp"

    def __init__(self, workspace: Callable[[], Path]):
        self.workspace = workspace
        #: The `mcp__*` tools offered now, by name (`install`).
        self.tools: dict[str, Tool] = {}
        self.configs: dict[str, ServerConfig] = {}
        self.shown: set[str] = set()  #: warnings already given, so each is said once
        self.hub: Any = None
        #: Tool lists of servers not started yet, from the last session (`tool_cache`).
        self.cached: dict[str, list[RemoteTool]] = {}
        self._saved: dict[str, int] = {}  #: id of the tool list last cached, by server
        #: Servers a front adds beside the configured ones (`serve_also`).
        self.extra: Mapping[str, ServerConfig] = {}

    async def refresh(self, start_all: bool = False) -> list[str]:
        """Load configs, start what should run, install the tools; notices to show.

        A server whose tool list is cached from an earlier session is not started: its
        tools are offered at once and it starts when one of them is called (`start_all`:
        start every server anyway, as `elelem-kernel mcp` does).
        """
        configs, problems = mcp_config.load(self.workspace())
        configs = {**self.extra, **configs}
        self.configs = configs
        notices = [p for p in problems if p not in self.shown]
        live = {n: c for n, c in configs.items() if not c.disabled and not c.skipped}
        if live and not sdk_installed():
            files = sorted({c.source for c in live.values()})
            notices.append(
                f"MCP servers are configured in {', '.join(files)} but the MCP SDK (2.x) is "
                f"not installed: {INSTALL_HINT}"
            )
            live = {}
        if live or self.hub is not None:
            # the hub and the tool cache only once a server is configured
            from elelem_kernel.mcp import tool_cache
            from elelem_kernel.mcp.hub import hub

            self.hub = hub()
            self.cached = {}
            for name, config in live.items():
                link = self.hub.links.get(name)
                started = link is not None and link.config == config and link.state != "stopped"
                if not start_all and not started:
                    tools = tool_cache.load(config)
                    if tools is not None:
                        self.cached[name] = tools
            lazy = frozenset(self.cached)
            notices += await self.hub.run(self.hub.sync(configs if live else {}, lazy))
        self.install()
        fresh = [n for n in notices if n not in self.shown]
        self.shown.update(fresh)
        return fresh

    def serve_also(self, servers: Mapping[str, ServerConfig]) -> None:
        """Offer the tools of `servers` too (an ACP client's `mcpServers`), read again at
        each refresh, so the front may add to them later; a configured server of the same
        name wins."""
        self.extra = servers

    def over(self, below: Mapping[str, Tool]) -> dict[str, Tool]:
        """The tools below but `mcp__*` ones, then the servers' tools."""
        return {**{n: t for n, t in below.items() if not n.startswith(PREFIX)}, **self.tools}

    def install(self) -> None:
        """Offer the running servers' tools (and the cached ones of servers not started)."""
        offered: dict[str, Tool] = {}
        self.tools = offered
        if self.hub is None:
            return
        # a hub runs: servers are configured (a session without any never loads these)
        from elelem_kernel.mcp import tool_cache
        from elelem_kernel.mcp.server_tools import make_tool

        for link in list(self.hub.links.values()):
            if link.state == "running" and self._saved.get(link.name) != id(link.tools):
                tool_cache.save(link.config, link.tools)
                self._saved[link.name] = id(link.tools)
            if link.state == "running":
                tools = link.tools
            elif link.state == "stopped" and link.name in self.cached:
                tools = self.cached[link.name]
            else:
                continue
            for remote in list(tools):
                tool = make_tool(link.config, remote, self.call)
                offered.pop(tool.name, None)  # a later one of the same name comes last
                offered[tool.name] = tool

    async def call(
        self, config: ServerConfig, tool: str, arguments: dict[str, object]
    ) -> dict[str, object]:
        """Run `tool` on its server through the hub (starting the server first if it was
        offered from the cache); failures become error results."""
        # a call means servers are configured (a session without any never loads these)
        from elelem_kernel.mcp import tool_cache
        from elelem_kernel.mcp.server_tools import convert

        try:
            link = await self.hub.run(self.hub.ensure(config.name))
            if link is not None and link.state == "running":
                self.cached.pop(config.name, None)
                if self._saved.get(link.name) != id(link.tools):
                    tool_cache.save(link.config, link.tools)
                    self._saved[link.name] = id(link.tools)
            result = await self.hub.run(self.hub.call(config.name, tool, arguments, config.timeout))
        except (TimeoutError, RuntimeError) as e:
            return {"error": redact(str(e), forms_of(config.secrets))}
        return convert(result, config.secrets)

    def restart(self, name: str) -> str:
        configs, _ = mcp_config.load(self.workspace())
        configs = {**self.extra, **configs}
        if name not in configs:
            known = ", ".join(sorted(configs)) or "(none configured)"
            raise BadInput(f"no MCP server named {name!r}; servers: {known}")
        if self.hub is None or name not in self.hub.links:
            self.shown.clear()
            return f"MCP server {name!r} was not started yet; it starts with the next turn."
        link = self.hub.wait(self.hub.restart(name))
        self.install()
        if link.state == "running":
            return f"restarted MCP server **{name}**: {len(link.tools)} tools"
        return f"MCP server **{name}**: {link.state}" + (f" ({link.why})" if link.why else "")

    def tools_note(self) -> str | None:
        """Why `/tools` lists no MCP tools yet: configured servers start with the first
        turn (None when there are none, or they ran)."""
        if self.hub is not None:
            return None
        configs, _ = mcp_config.load(self.workspace())
        names = [n for n, c in configs.items() if not c.disabled and not c.skipped]
        if not names:
            return None
        return (
            f"MCP servers {', '.join(names)} start with the first turn; their tools are "
            "listed after it (`/mcp` shows the servers)."
        )

    def command(self, session: object, args: str) -> str:
        """`/mcp` shows the servers; `/mcp restart NAME` restarts one."""
        words = args.split()
        if words[:1] == ["restart"]:
            if len(words) != 2:
                raise BadInput("name the server to restart")
            return self.restart(words[1])
        if words:
            raise BadInput(f"unknown argument {args!r}")
        return report(self)


def report(state: McpTools) -> str:
    """Markdown: every server, where it was configured, its state and its tools with kinds."""
    configs, problems = mcp_config.load(state.workspace())
    configs = {**state.extra, **configs}
    if not configs and not problems:
        files = ", ".join(str(p) for p, _ in mcp_config.config_files(state.workspace()))
        return f"No MCP servers configured. Files read: {files}"
    links = state.hub.links if state.hub is not None else {}
    lines = []
    for name, config in configs.items():
        lines += _server_lines(state, name, config, links.get(name))
    lines += [f"warning: {p}" for p in problems]
    return "\n".join(f"  - {line[2:]}" if line.startswith("  ") else f"- {line}" for line in lines)


def _server_lines(state: McpTools, name: str, config: ServerConfig, link: Link | None) -> list[str]:
    """One server in `report`: its heading line, then indented lines about it."""
    status = _status(state, name, config, link)
    lines = [f"**{name}** ({config.transport}) from `{config.source}`: {status}"]
    lines.append(f"  runs `{redact(config.target, forms_of(config.secrets))}`")
    if config.env or config.headers:
        keys = [k for k, _ in (*config.env, *config.headers)]
        lines.append(f"  env/headers set (values hidden): {', '.join(keys)}")
    known = link.tools if link is not None and link.state == "running" else None
    if known is None and link is not None and link.state == "stopped":
        known = state.cached.get(name)
    if known is not None:
        from elelem_kernel.mcp.server_tools import make_tool  # only for a server with tools

        tools = [make_tool(config, t, state.call) for t in known]
        listed = ", ".join(f"`{t.name}` ({t.kind})" for t in tools) or "(no tools)"
        lines.append(f"  tools: {listed}")
    if link is not None and link.log.exists():  # a server that never ran has none
        lines.append(f"  log: `{link.log}`")
    return lines


def _status(state: McpTools, name: str, config: ServerConfig, link: Link | None) -> str:
    """Where server `name` stands: disabled, skipped, not started, or its link's state."""
    if config.disabled:
        return "disabled"
    if config.skipped:
        return f"skipped: {config.skipped}"
    if link is None:
        return "not started (starts with the next turn)"
    if link.state == "stopped" and name in state.cached:
        return (
            "not started: its tools are known from an earlier session; it starts when one is called"
        )
    if link.state in ("failed", "crashed"):
        return f"{link.state}: {link.why}"
    return link.state  # starting, running, stopped
