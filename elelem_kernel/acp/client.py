"""The ACP client as the agent sees it: what the agent asks of it and tells it.

`session/update` notifications, and the requests whose answers the agent waits for:
`session/request_permission`, `fs/*` and `terminal/*`. Each answer is checked for the
fields the agent reads; one that lacks them fails as a request the client refused would
(`RpcError`), and its caller falls back or says no.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from elelem_kernel.acp.params import Params

if TYPE_CHECKING:
    from elelem_kernel.acp.jsonrpc import Connection
    from elelem_kernel.acp.messages import Json, PermissionOption, SessionUpdate, ToolCall


@dataclass
class TerminalOutput:
    """What `terminal/output` answered: the output so far and, once it exited, how."""

    output: str
    truncated: bool
    exit_code: int | None = None
    signal: str | None = None


def _answer(result: Json, method: str) -> Params:
    return Params({} if result is None else result, f"the client's answer to {method}")


class AcpClient:
    """The client at the other end of `connection`."""

    def __init__(self, connection: Connection):
        self.connection = connection

    async def session_update(self, session_id: str, update: SessionUpdate) -> None:
        await self.connection.notify("session/update", {"sessionId": session_id, "update": update})

    async def request_permission(
        self, session_id: str, tool_call: ToolCall, options: list[PermissionOption]
    ) -> str | None:
        """The option the person chose, None when the client cancelled the request."""
        method = "session/request_permission"
        params = {"sessionId": session_id, "toolCall": tool_call, "options": options}
        outcome = _answer(await self.connection.request(method, params), method).child("outcome")
        if outcome.text("outcome") == "selected":
            return outcome.text("optionId")
        return None

    async def read_text_file(self, session_id: str, path: str) -> str:
        method = "fs/read_text_file"
        params = {"sessionId": session_id, "path": path}
        return _answer(await self.connection.request(method, params), method).text("content")

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        params = {"sessionId": session_id, "path": path, "content": content}
        await self.connection.request("fs/write_text_file", params)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str],
        cwd: str,
        env: dict[str, str],
        output_byte_limit: int,
    ) -> str:
        """Run `command` in a new terminal of the client's; the terminal's id."""
        method = "terminal/create"
        params = {
            "sessionId": session_id,
            "command": command,
            "args": list(args),
            "cwd": cwd,
            "env": [{"name": k, "value": v} for k, v in env.items()],
            "outputByteLimit": output_byte_limit,
        }
        return _answer(await self.connection.request(method, params), method).text("terminalId")

    async def terminal_output(self, session_id: str, terminal_id: str) -> TerminalOutput:
        method = "terminal/output"
        params = {"sessionId": session_id, "terminalId": terminal_id}
        answer = _answer(await self.connection.request(method, params), method)
        shown = TerminalOutput(answer.text("output"), answer.flag("truncated"))
        status = answer.child("exitStatus")
        if status.values:
            shown.exit_code = status.maybe_integer("exitCode")
            shown.signal = status.maybe_text("signal")
        return shown

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str) -> None:
        await self._terminal("terminal/wait_for_exit", session_id, terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._terminal("terminal/kill", session_id, terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str) -> None:
        await self._terminal("terminal/release", session_id, terminal_id)

    async def _terminal(self, method: str, session_id: str, terminal_id: str) -> None:
        params = {"sessionId": session_id, "terminalId": terminal_id}
        await self.connection.request(method, params)
