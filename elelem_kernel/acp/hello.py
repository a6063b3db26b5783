"""`initialize`: what the client offers, and the agent's answer.

A client waits for `initialize` before it shows the agent as ready, so `serve` answers it
from this small module while the agent's own (sessions, tools, providers) still loads in
a thread. What the client said it offers (`Offers`) is handed to the agent once loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from elelem_kernel._version import __version__
from elelem_kernel.acp.params import Params
from elelem_kernel.errors import RpcError
from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME

#: The ACP protocol version this agent speaks (the SDK's `PROTOCOL_VERSION`).
PROTOCOL_VERSION = 1


def initialize_result(client_version: int) -> dict[str, object]:
    """The `initialize` result for a client speaking `client_version`, as JSON."""
    return {
        "protocolVersion": min(client_version, PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {"list": {}},
        },
        "authMethods": [],
        "agentInfo": {"name": KERNEL_NAME, "title": KERNEL_DISPLAY_NAME, "version": __version__},
    }


@dataclass(frozen=True)
class Offers:
    """What the client said it can do: the editor's files, its terminal, `usage_update`."""

    reads: bool = False
    writes: bool = False
    terminal: bool = False
    usage: bool = False


def read_offers(capabilities: Params) -> Offers:
    """The client's `clientCapabilities` as `Offers`.

    `usage_update` came within protocol version 1, so clients built before it reject it
    (TypeScript SDK <= 0.13, Zed's older library). Those that advertise `session`
    capabilities, added to the schema after it, take it, as does a client that says so in
    its capabilities' `_meta` (`"usageUpdate": true`). Capabilities that are not as the
    schema has them offer nothing (the schema's own default for them)."""
    try:
        fs = capabilities.child("fs")
        reads, writes = fs.flag("readTextFile"), fs.flag("writeTextFile")
        terminal = capabilities.flag("terminal")
    except RpcError:
        return Offers()
    meta = capabilities.values.get("_meta")
    told = isinstance(meta, dict) and meta.get("usageUpdate") is True
    usage = told or isinstance(capabilities.values.get("session"), dict)
    return Offers(reads=reads, writes=writes, terminal=terminal, usage=usage)
