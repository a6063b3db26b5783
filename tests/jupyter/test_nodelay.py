"""Kernel websockets send each message at once (elelem_kernel/jupyter/nodelay.py): the
installed server extension picks `AtOnceChannelsConnection` where Jupyter Server would use
its own class, leaves a class the person set alone, and the connection turns Nagle's
algorithm off on the browser's socket before it connects."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from jupyter_server.serverapp import ServerApp
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from tornado.httpserver import HTTPServer
from tornado.web import Application
from tornado.websocket import WebSocketHandler, websocket_connect

from elelem_kernel.jupyter.gateway import _load_jupyter_server_extension
from elelem_kernel.jupyter.nodelay import AtOnceChannelsConnection, send_at_once

OWN = "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection"


@pytest.fixture
def jupyter_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("CONFIG", "DATA", "RUNTIME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        monkeypatch.setenv(f"JUPYTER_{name}_DIR", str(folder))
    return tmp_path


def server(*argv: str) -> ServerApp:
    app = ServerApp()
    app.initialize(argv=["--port=0", "--no-browser", *argv])
    _load_jupyter_server_extension(app)  # as the installed config does, once more
    return app


def test_without_a_gateway_kernel_websockets_are_connected_at_once(jupyter_dirs):
    app = server(f"--ServerApp.root_dir={jupyter_dirs}")
    assert app.web_app.settings["kernel_websocket_connection_class"] is AtOnceChannelsConnection


def test_a_connection_class_the_person_set_is_left_alone(jupyter_dirs):
    app = server(
        f"--ServerApp.root_dir={jupyter_dirs}",
        f"--ServerApp.kernel_websocket_connection_class={OWN}",
    )
    chosen = app.web_app.settings["kernel_websocket_connection_class"]
    assert chosen is ZMQChannelsWebsocketConnection


class Recorded:
    """A websocket handler's stand-in: whether nodelay was asked before connecting."""

    ws_connection = object()

    def __init__(self) -> None:
        self.calls: list[str] = []

    def set_nodelay(self, value: bool) -> None:
        self.calls.append(f"nodelay {value}")


def test_the_connection_turns_nodelay_on_before_it_connects(monkeypatch):
    handler = Recorded()
    monkeypatch.setattr(
        ZMQChannelsWebsocketConnection, "connect", lambda self: handler.calls.append("connect")
    )
    connection = AtOnceChannelsConnection.__new__(AtOnceChannelsConnection)
    connection._trait_values["websocket_handler"] = handler  # no kernel behind it
    connection.connect()
    assert handler.calls == ["nodelay True", "connect"]


def test_send_at_once_sets_tcp_nodelay_on_the_websockets_socket():
    seen: list[int] = []

    class Handler(WebSocketHandler):
        def open(self) -> None:
            sock = self.ws_connection.stream.socket  # type: ignore[union-attr]
            before = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            send_at_once(self)
            seen.extend([before, sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)])
            self.write_message("opened")

    async def main() -> None:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        http = HTTPServer(Application([("/ws", Handler)]))
        http.add_socket(listener)
        port = listener.getsockname()[1]
        try:
            ws = await websocket_connect(f"ws://127.0.0.1:{port}/ws")
            assert await ws.read_message() == "opened"
            ws.close()
        finally:
            http.stop()

    asyncio.run(main())
    assert seen[0] == 0  # tornado leaves Nagle on: what this module is for
    assert seen[1] != 0
