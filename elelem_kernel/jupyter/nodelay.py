"""Kernel websockets that send each message as it is written (TCP_NODELAY), in Jupyter Server.

Tornado leaves Nagle's algorithm on for a websocket unless its handler turns it off, and
Jupyter Server's kernel websocket does not: a small message written while an earlier one
is not yet acknowledged waits for that acknowledgement, which the browser delays (40 ms on
Linux). A turn writes bursts of small messages (the live view's widgets, busy and idle
around each comm message), so the open notebook's requests that follow a burst reached
the page 35-45 ms after the kernel sent them, 2-5 ms when idle: `notebook_run` waited
twice (its `read`, then its `outputs`), and so did a person's cell after a burst (issue 36
item 1). The browser already sends with TCP_NODELAY, and ZMQ between kernel and server.

Only Jupyter Server imports this module (the server extension in jupyter/gateway.py picks
the class).
"""

from __future__ import annotations

import asyncio

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from tornado.websocket import WebSocketHandler


def send_at_once(handler: WebSocketHandler) -> None:
    """Turn Nagle's algorithm off on `handler`'s open websocket (nothing before it opened)."""
    if handler.ws_connection is not None:
        handler.set_nodelay(True)


class AtOnceChannelsConnection(ZMQChannelsWebsocketConnection):
    """Jupyter Server's kernel websocket connection, its websocket sending at once."""

    # Synchronous like ZMQChannelsWebsocketConnection's own, though the base class
    # declares it async.
    def connect(self) -> asyncio.Future[None] | None:  # type: ignore[override]
        """Connect as jupyter_server does, once the websocket sends without delay."""
        send_at_once(self.websocket_handler)
        return super().connect()
