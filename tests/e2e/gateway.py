"""Kernel Gateway and a Jupyter server in front of it, as processes on 127.0.0.1, for tests.

`Gateway` runs `jupyter kernelgateway` in a folder of its own (so its kernels start
elsewhere than the server's root); `GatewayServer` runs Jupyter Server (or, subclassed,
JupyterLab) with `--gateway-url`, configured as the package installs it: the config file
that enables elelem's server extension, which proxies gateway websockets with
`ClosingGatewayConnection` (elelem_kernel/jupyter/gateway.py says why).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.e2e.browser.lab import LabServer, stop_process
from tests.ports import free_port

#: The Jupyter Server config file the wheel installs (pyproject.toml, shared-data).
SERVER_CONFIG = (
    Path(__file__).parents[2] / "jupyter-config" / "jupyter_server_config.d" / "elelem_kernel.json"
)


class Gateway:
    """`jupyter kernelgateway` on 127.0.0.1, started in `folder`, passing `env` to kernels."""

    def __init__(self, folder: Path, env: dict[str, str], log: Path):
        self.folder, self.log, self.port = folder, log, free_port()
        self.env = {**env, "KG_ENV_PROCESS_WHITELIST": ",".join(env)}
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> Gateway:
        argv = [
            sys.executable,
            "-m",
            "kernel_gateway",
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={self.port}",
            "--KernelGatewayApp.port_retries=0",
            "--JupyterWebsocketPersonality.list_kernels=True",
        ]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = self.log.open("wb")
        self.process = subprocess.Popen(
            argv, env=self.env, cwd=self.folder, stdout=out, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"kernel gateway exited: see {self.log}")
            try:
                urllib.request.urlopen(f"{self.url}/api/kernelspecs", timeout=5).read()
                return self
            except OSError:
                time.sleep(0.2)  # polling a starting server, not waiting on a page
        raise RuntimeError(f"kernel gateway did not answer within {timeout} s: see {self.log}")

    def kernel(self, kernel_id: str) -> dict:
        """The gateway's model of one kernel (its `connections` count included)."""
        with urllib.request.urlopen(f"{self.url}/api/kernels/{kernel_id}", timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        stop_process(self.process)


class GatewayServer(LabServer):
    """Jupyter Server whose kernels run on `gateway`.

    Its config holds the file the package installs, so elelem's server extension picks the
    websocket proxy; `connection` (a dotted class name) sets one on the command line instead.
    """

    app = "jupyter_server"

    def __init__(
        self,
        root: Path,
        env: dict[str, str],
        log: Path,
        gateway: Gateway,
        connection: str | None = None,
    ):
        super().__init__(root, env, log)
        self.gateway = gateway
        self.connection = connection
        config = Path(env["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.d"
        config.mkdir(parents=True, exist_ok=True)
        (config / SERVER_CONFIG.name).write_text(SERVER_CONFIG.read_text())

    def command(self) -> list[str]:
        argv = super().command()
        argv[argv.index("jupyterlab")] = self.app
        if self.app != "jupyterlab":
            argv.remove("--LabApp.expose_app_in_browser=True")
        argv.append(f"--gateway-url={self.gateway.url}")
        if self.connection is not None:
            argv.append(f"--ServerApp.kernel_websocket_connection_class={self.connection}")
        return argv
