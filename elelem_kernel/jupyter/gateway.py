"""Jupyter Server's websocket proxy to a Kernel Gateway, without websockets left behind.

Behind `--gateway-url`, each browser websocket to a kernel is proxied by one websocket from
Jupyter Server to the gateway, with the browser's session id. JupyterLab opens a kernel
websocket and closes it again at once when it opens a notebook. jupyter_server's
`GatewayWebSocketConnection` (2.21) then cancels the pending `websocket_connect` future,
which does not stop the handshake: the gateway keeps a websocket that nobody reads or
closes, next to the one for the browser's second websocket, with the same session id. The
gateway gives both the same ZMQ identity, so the kernel may send that session's replies
to the forgotten one: the notebook waits for its kernel, at once or after its next restart,
until the gateway's ping timeout closes the forgotten websocket 90 s later ("WebSocket
ping timeout" in the gateway's log).

`ClosingGatewayConnection` lets such a handshake finish, closes that websocket, and opens
the next one for the same kernel and session only after it closed. This module is also a
Jupyter Server extension, enabled by the config file the package installs
(`etc/jupyter/jupyter_server_config.d/elelem_kernel.json`): behind `--gateway-url` it makes
the server use that class, unless the person configured another one; without a gateway,
jupyter/nodelay.py's `AtOnceChannelsConnection` (the same, sending each message at once).
Either sends to the browser with TCP_NODELAY. Only Jupyter Server imports this module.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from jupyter_server.gateway.connections import GatewayWebSocketConnection
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

from elelem_kernel.jupyter.nodelay import AtOnceChannelsConnection, send_at_once

#: Seconds to wait for a left websocket to close before opening the next one regardless.
CLOSE_WAIT = 30.0


class ClosingGatewayConnection(GatewayWebSocketConnection):
    """A gateway websocket proxy that closes what the browser left and opens one at a time."""

    #: Gateway websockets being closed because the browser left while they opened, by
    #: "kernel id:session id"; each entry goes when its websocket has closed.
    closing: ClassVar[dict[str, asyncio.Future[None]]] = {}

    @property
    def key(self) -> str:
        return f"{self.kernel_id}:{self.session_id}"

    async def connect(self) -> None:
        """Open the gateway websocket, once the one the browser left for this session closed."""
        send_at_once(self.websocket_handler)  # the browser's side, as AtOnceChannelsConnection
        closing = self.closing.get(self.key)
        if closing is None:
            await super().connect()
            return
        # Messages the browser sends meanwhile wait on ws_future (handle_incoming_message).
        waiting: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.ws_future = waiting
        try:
            await asyncio.wait({closing}, timeout=CLOSE_WAIT)
            if not self.disconnected:
                await super().connect()
        finally:
            waiting.set_result(None)

    # Synchronous like the gateway class's own, which the handler calls without awaiting,
    # though the base class declares it async.
    def disconnect(self) -> None:  # type: ignore[override]
        """The browser left: close the gateway websocket, now or once its handshake ends."""
        self.disconnected = True
        if self.ws is not None:
            self.ws.close()
        elif self.ws_future is not None and not self.ws_future.done():
            key = self.key
            closing = asyncio.ensure_future(close_when_open(self.ws_future))
            self.closing[key] = closing
            closing.add_done_callback(lambda _: self.forget(key, closing))

    @classmethod
    def forget(cls, key: str, closing: asyncio.Future[None]) -> None:
        if cls.closing.get(key) is closing:
            del cls.closing[key]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Jupyter Server's entry point: this module is the extension."""
    return [{"module": "elelem_kernel.jupyter.gateway"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Proxy kernel websockets with `ClosingGatewayConnection` behind `--gateway-url`, and
    connect them with `AtOnceChannelsConnection` without a gateway.

    Only where the server would use jupyter_server's own class: a class the person set
    (`ServerApp.kernel_websocket_connection_class`) is left alone. The handlers read the
    class from the settings at each connection.
    """
    settings = serverapp.web_app.settings
    if "kernel_websocket_connection_class" in serverapp.config.get("ServerApp", {}):
        return
    if not serverapp.gateway_config.gateway_enabled:
        if settings.get("kernel_websocket_connection_class") is ZMQChannelsWebsocketConnection:
            settings["kernel_websocket_connection_class"] = AtOnceChannelsConnection
        return
    if settings.get("kernel_websocket_connection_class") is not GatewayWebSocketConnection:
        return
    settings["kernel_websocket_connection_class"] = ClosingGatewayConnection
    serverapp.log.info("elelem-kernel: gateway websockets proxied by ClosingGatewayConnection")


async def close_when_open(handshake: asyncio.Future[Any]) -> None:
    """Close the websocket `handshake` opens (if it opens one) and wait until it is closed."""
    await asyncio.wait({handshake})
    if handshake.cancelled() or handshake.exception() is not None:
        return
    ws = handshake.result()
    if ws is None:  # a connect() that waited and then did not open one
        return
    ws.close()
    try:
        await asyncio.wait_for(drain(ws), CLOSE_WAIT)
    except asyncio.TimeoutError:
        pass


async def drain(ws: Any) -> None:
    """Read (and drop) what arrives until the websocket is closed."""
    while await ws.read_message() is not None:
        pass
