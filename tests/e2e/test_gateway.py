"""Behind Kernel Gateway, a websocket the browser drops at once leaves nothing behind.

JupyterLab opens a kernel websocket and closes it again right away when it opens a
notebook. With jupyter_server's own gateway proxy the gateway kept that websocket open and
unread (elelem_kernel/jupyter/gateway.py), and the notebook's next websocket, with the same
session id, could wait forever for the kernel's replies. Here a client does the same
through a real Jupyter Server and a real Kernel Gateway: the second websocket gets its
reply, and the gateway is left with that one connection only.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.browser.lab import jupyter_env
from tests.e2e.gateway import SERVER_CONFIG, Gateway, GatewayServer

pytestmark = pytest.mark.kernel
pytest.importorskip("kernel_gateway", reason="needs `pip install jupyter_kernel_gateway`")


OWN_PROXY = "jupyter_server.gateway.connections.GatewayWebSocketConnection"
PICKED = "elelem-kernel: gateway websockets proxied by ClosingGatewayConnection"


def gateway_server(tmp_path, connection: str | None = None) -> Iterator[GatewayServer]:
    env = jupyter_env(tmp_path / "jupyter")
    (tmp_path / "root").mkdir()
    (tmp_path / "kernels").mkdir()
    gateway = Gateway(tmp_path / "kernels", env, tmp_path / "kernelgateway.log").start()
    front = GatewayServer(tmp_path / "root", env, tmp_path / "server.log", gateway, connection)
    try:
        yield front.start()
    finally:
        front.stop()
        gateway.stop()


@pytest.fixture
def server(tmp_path) -> Iterator[GatewayServer]:
    """Jupyter Server behind Kernel Gateway, configured as the installed package does."""
    yield from gateway_server(tmp_path)


@pytest.fixture
def server_with_its_own_proxy(tmp_path) -> Iterator[GatewayServer]:
    """The same, with the websocket class set on the command line by the person."""
    yield from gateway_server(tmp_path, OWN_PROXY)


def kernel_info_request(session: str) -> str:
    header = {
        "msg_id": uuid.uuid4().hex,
        "msg_type": "kernel_info_request",
        "session": session,
        "username": "test",
        "version": "5.3",
        "date": "",
    }
    message = {"header": header, "parent_header": {}, "metadata": {}, "content": {}}
    return json.dumps({**message, "channel": "shell", "buffers": []})


async def drop_then_ask(url: str, session: str) -> dict:
    """Open a websocket and close it at once, open another, and return its kernel_info_reply."""
    from tornado.websocket import websocket_connect

    dropped = await websocket_connect(url)
    dropped.close()
    live = await websocket_connect(url)
    try:
        request = kernel_info_request(session)
        await live.write_message(request)
        asked = json.loads(request)["header"]["msg_id"]
        while True:
            raw = await asyncio.wait_for(live.read_message(), timeout=60)
            assert raw is not None, "the server closed the websocket"
            message = json.loads(raw)
            if message["parent_header"].get("msg_id") == asked and message["channel"] == "shell":
                return message
    finally:
        live.close()


def connections_when_settled(gateway: Gateway, kernel_id: str, want: int) -> int:
    """The gateway's connection count for the kernel, once it is `want` (or after 30 s)."""
    deadline = time.monotonic() + 30
    while (count := gateway.kernel(kernel_id)["connections"]) != want:
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)  # polling another process's state
    return count


def test_a_websocket_dropped_at_once_leaves_no_connection_on_the_gateway(server):
    kernel = server.api("POST", "/api/kernels", {"name": "python3"})
    session = uuid.uuid4().hex
    url = (
        f"ws://127.0.0.1:{server.port}/api/kernels/{kernel['id']}/channels"
        f"?session_id={session}&token={server.token}"
    )
    reply = asyncio.run(drop_then_ask(url, session))
    assert reply["msg_type"] == "kernel_info_reply"
    assert reply["content"]["status"] == "ok"
    assert connections_when_settled(server.gateway, kernel["id"], want=0) == 0
    assert PICKED in server.log.read_text()  # the installed server extension chose the proxy


def test_a_websocket_class_the_person_set_is_left_alone(server_with_its_own_proxy):
    server = server_with_its_own_proxy
    kernel = server.api("POST", "/api/kernels", {"name": "python3"})
    assert kernel["id"]
    assert PICKED not in server.log.read_text()


def test_the_installed_config_enables_the_server_extension(tmp_path):
    env = jupyter_env(tmp_path / "jupyter")
    config = tmp_path / "jupyter" / "config" / "jupyter_server_config.d"
    config.mkdir(parents=True, exist_ok=True)
    (config / SERVER_CONFIG.name).write_text(SERVER_CONFIG.read_text())
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter_server", "extension", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)  # colours
    assert "elelem_kernel.jupyter.gateway enabled" in out, out
    assert re.search(r"elelem_kernel\.jupyter\.gateway\s+OK", out), out
