"""The answer to `initialize`, built without the ACP SDK.

Importing the SDK takes over a second (its schema is hundreds of pydantic models), and a
client waits for `initialize` before it shows the agent as ready. `serve` answers the
first `initialize` with this while the SDK loads in the background; `ElelemAgent` answers
any later one with the same dict, so the two cannot differ.
"""

from __future__ import annotations

from typing import Any

from elelem_kernel._version import __version__
from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME

#: The ACP protocol version this agent speaks (the SDK's `PROTOCOL_VERSION`).
PROTOCOL_VERSION = 1


def initialize_result(client_version: int) -> dict[str, Any]:
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


def early_initialize(message: Any) -> int | None:
    """The client's protocol version when `message` is an `initialize` request this module
    can answer (an id and an integer `protocolVersion`), else None (the SDK answers)."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params = message.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    if "id" not in message or isinstance(version, bool) or not isinstance(version, int):
        return None
    return version if 0 <= version <= 65535 else None
