"""JSON-RPC 2.0 over newline-delimited JSON: the agent's side of an ACP connection.

Each request the client sends is answered by a task of its own, so a long
`session/prompt` does not hold up `session/cancel` or another session's requests; a
handler's `RpcError` is the error answer, any other exception an internal error (logged).
Notifications run the same way and are answered with nothing. The agent's own requests to
the client (`session/request_permission`, `fs/*`, `terminal/*`) get ids of their own and
wait for the client's answer; when the client goes away (`close`) they fail with
`ConnectionError` (`disconnect`), and the handlers still running are cancelled (`close`).

`serve.py` reads and checks the lines (lines.py) and hands each message to `receive`;
`write` is how a line reaches the client. Messages are written one whole line at a time,
in the order they were sent.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from elelem_kernel.errors import RpcError

if TYPE_CHECKING:
    from elelem_kernel.acp.messages import Json

log = logging.getLogger("elelem_kernel.acp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002  #: ACP's: no such session
#: A request's id: the client's may be a string or a number (or null, in an error).
Id = str | int | float | None
#: What answers a request or takes a notification (its third argument is True): the
#: method, its params, and the result to send (any value `json.dumps` takes).
Handler = Callable[[str, "dict[str, Json]", bool], Awaitable[object]]


def id_of(message: dict[str, Json]) -> Id:
    """The message's id (lines.py has checked that it is one), None when it has none."""
    key = message.get("id")
    return key if isinstance(key, (str, int, float)) else None


def line(message: Mapping[str, object]) -> bytes:
    """`message` as one line of compact JSON: ASCII (a lone surrogate in a tool's output
    is escaped, not an encoding error), and never NaN, which JSON has not (ValueError)."""
    return (json.dumps(message, separators=(",", ":"), allow_nan=False) + "\n").encode()


class Connection:
    """One client: its requests answered by `handler`, ours sent with `request`."""

    def __init__(self, handler: Handler, write: Callable[[bytes], Awaitable[None]]):
        self.handler = handler
        self.write = write
        self.closed = False
        self._next_id = 0
        self._waiting: dict[Id, asyncio.Future[Json]] = {}
        self._running: set[asyncio.Task[None]] = set()

    # -- the client's messages -------------------------------------------------------

    def receive(self, message: dict[str, Json]) -> None:
        """A checked message from the client (lines.py): handled in a task of its own
        when it is a request or notification, handed to its waiter when an answer."""
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            args: dict[str, Json] = params if isinstance(params, dict) else {}
            if "id" in message:
                self._start(self._answer(id_of(message), method, args, params))
            else:
                self._start(self._notified(method, args))
        else:
            self._answered(message)

    def _start(self, work: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _answer(self, key: Id, method: str, args: dict[str, Json], params: Json) -> None:
        reply: dict[str, object] = {"jsonrpc": "2.0", "id": key}
        try:
            if params is not None and not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, f"invalid params: {method} takes an object")
            reply["result"] = await self.handler(method, args, False)
        except RpcError as e:
            reply["error"] = e.as_json()
        except asyncio.CancelledError:  # the client has gone: there is no one to answer
            raise
        except Exception as e:  # a bug: the client is told, the agent goes on
            log.exception("%s failed", method)
            reply["error"] = {"code": INTERNAL_ERROR, "message": f"internal error: {e}"}
        try:
            data = line(reply)
        except (TypeError, ValueError) as e:  # a bug, told as one
            log.exception("the answer to %s is not JSON", method)
            reply = {"jsonrpc": "2.0", "id": key}
            reply["error"] = {"code": INTERNAL_ERROR, "message": f"internal error: {e}"}
            data = line(reply)
        await self.write(data)

    async def _notified(self, method: str, args: dict[str, Json]) -> None:
        try:
            await self.handler(method, args, True)
        except RpcError as e:
            log.warning("notification %s: %s", method, e.message)
        except Exception:
            log.exception("notification %s failed", method)

    def _answered(self, message: dict[str, Json]) -> None:
        waiter = self._waiting.pop(id_of(message), None)
        if waiter is None or waiter.done():
            log.warning("an answer to no request of ours: id %r", message.get("id"))
            return
        error = message.get("error")
        if isinstance(error, dict):
            code, text = error.get("code"), error.get("message")
            waiter.set_exception(
                RpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    text if isinstance(text, str) else "error",
                    error.get("data"),
                )
            )
        else:
            waiter.set_result(message.get("result"))

    # -- the agent's messages --------------------------------------------------------

    async def request(self, method: str, params: Mapping[str, object]) -> Json:
        """Ask the client; its result, or its error as `RpcError`."""
        if self.closed:
            raise ConnectionError("the client has gone")
        key = self._next_id
        self._next_id += 1
        waiter: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._waiting[key] = waiter
        try:
            await self._send({"jsonrpc": "2.0", "id": key, "method": method, "params": params})
            return await waiter
        finally:
            self._waiting.pop(key, None)

    async def notify(self, method: str, params: Mapping[str, object]) -> None:
        """Tell the client (if it still reads: `write` drops what it cannot deliver)."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _send(self, message: Mapping[str, object]) -> None:
        await self.write(line(message))

    def running(self) -> set[asyncio.Task[None]]:
        """The tasks answering the client's requests and notifications now."""
        return set(self._running)

    def disconnect(self) -> None:
        """Nothing more will come from the client: our requests waiting for its answers
        fail now, and later ones at once."""
        self.closed = True
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError("the client has gone"))
        self._waiting.clear()

    async def close(self) -> None:
        """The client has gone: our requests fail, the handlers still running stop."""
        self.disconnect()
        running = list(self._running)
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
