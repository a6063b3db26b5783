"""The ACP methods the agent answers: each one's params read and checked, then the agent's.

`initialize` is answered by `serve` (hello.py); this is everything after it. A method the
agent does not offer is "method not found" (-32601), as are extension methods (`_name`)
and the protocol's unstable ones; an unknown notification is ignored, as JSON-RPC asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elelem_kernel.acp.jsonrpc import METHOD_NOT_FOUND
from elelem_kernel.acp.params import Params, invalid
from elelem_kernel.errors import RpcError

if TYPE_CHECKING:
    from elelem_kernel.acp.agent import ElelemAgent
    from elelem_kernel.acp.messages import Json


async def answer(
    agent: ElelemAgent, method: str, params: dict[str, Json], notification: bool
) -> object:
    """The result of `method` (None for a notification)."""
    read = Params(params, f"invalid params: {method}")
    if notification:
        if method == "session/cancel":
            await agent.cancel(read.text("sessionId"))
        return None
    if method == "session/new":
        return await agent.new_session(read.text("cwd"), read.objects("mcpServers", False))
    if method == "session/load":
        servers = read.objects("mcpServers", False)
        return await agent.load_session(read.text("cwd"), read.text("sessionId"), servers)
    if method == "session/list":
        return await agent.list_sessions(read.maybe_text("cwd"))
    if method == "session/prompt":
        blocks = read.values.get("prompt")
        if not isinstance(blocks, list):
            raise invalid(f"invalid params: {method}: prompt must be a list of content blocks")
        return await agent.prompt(read.text("sessionId"), blocks)
    if method == "session/set_mode":
        return await agent.set_session_mode(read.text("sessionId"), read.text("modeId"))
    if method == "session/set_config_option":
        value = read.values.get("value")
        if not isinstance(value, (str, bool)):
            raise invalid(f"invalid params: {method}: value must be a string or a boolean")
        return await agent.set_config_option(read.text("sessionId"), read.text("configId"), value)
    if method == "authenticate":
        raise invalid(
            "elelem needs no authentication: model keys come from the environment "
            "(ANTHROPIC_API_KEY, OPENAI_API_KEY, ...)"
        )
    raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}", {"method": method})
