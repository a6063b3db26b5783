"""Restore through Kernel Gateway: the kernel runs elsewhere and cannot find the file itself.

`jupyter kernelgateway` starts kernels in its own folder with a bare environment (no
`JPY_SESSION_NAME`), and JupyterLab talks to it with `--gateway-url`. Without the
extension the kernel knows no notebook ("no notebook file known"); with it, an unsaved
notebook's two turns come back after a restart, and the workspace is the notebook's folder.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser.lab import LabServer, free_port, write_notebook
from tests.e2e.browser.pages import FROZEN
from tests.e2e.browser.test_restore_extension import lab_env, notebook_metadata, open_page, said
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser

WORKSPACE = (
    "from elelem_kernel.jupyter.front import front_for\n"
    "print('workspace:', front_for(get_ipython()).session.workspace)"
)


#: Resolves true once the kernel answers a kernel_info request, reconnecting the websocket
#: once when it does not within 20 s: through a gateway, the websocket that JupyterLab
#: opens after a restart sometimes loses the first messages (seen with and without the
#: extension; jupyter_server's gateway proxy), and a cell sent then never runs.
ANSWERS = """
async () => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const answered = () => Promise.race([
    kernel.requestKernelInfo().then(() => true),
    new Promise(resolve => setTimeout(() => resolve(false), 20000)),
  ]);
  if (await answered()) return 'answered';
  await kernel.reconnect();
  return (await answered()) ? 'answered after a reconnect' : 'no answer';
}
"""


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

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


class GatewayLab(LabServer):
    """JupyterLab whose kernels run on `gateway`."""

    def __init__(self, root: Path, env: dict[str, str], log: Path, gateway: Gateway):
        super().__init__(root, env, log)
        self.gateway = gateway

    def command(self) -> list[str]:
        return [*super().command(), f"--gateway-url={self.gateway.url}"]


@pytest.fixture(scope="module")
def gateway_lab(shots, wire, tmp_path_factory) -> Iterator[GatewayLab]:
    root = tmp_path_factory.mktemp("gateway-lab-root")
    elsewhere = tmp_path_factory.mktemp("gateway-kernels")
    env = lab_env(tmp_path_factory.mktemp("jupyter-gw"), wire, enabled=True)
    gateway = Gateway(elsewhere, env, shots / "kernelgateway.log").start()
    lab = GatewayLab(root, env, shots / "jupyterlab-gateway.log", gateway).start()
    yield lab
    lab.stop()
    gateway.stop()


@pytest.fixture
def wire_cleared(wire):
    """The session's wire server, its unused replies dropped after the test."""
    yield wire
    wire.clear()


# Through the gateway JupyterLab sometimes loses the kernel's websocket after a restart
# ("WebSocket ping timeout" in the gateway's log), with or without the extension; the test
# retries once, but on a loaded machine that is not always enough. The restore itself is
# covered without a gateway by tests/e2e/test_restore_comm.py and the other browser tests.
@pytest.mark.xfail(reason="Kernel Gateway may drop the websocket after a restart", strict=False)
def test_an_unsaved_notebook_restores_through_kernel_gateway(
    browser, gateway_lab, wire_cleared, shots
):
    wire = wire_cleared
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(text="Noted: the word is quince.")),
        reply("openai", Round(text="Noted: the colour is teal.")),
        reply("openai", Round(text="Quince and teal.")),
    )
    name = write_notebook(
        gateway_lab.root / "gateway.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai\nremember the word quince",
            "%%elelem -p openai\nremember the colour teal",
            "%%elelem -p openai\nwhich word and which colour?",
            WORKSPACE,
        ],
    )
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    lab = open_page(browser, gateway_lab, shots)
    try:
        lab.open(name, "gateway")
    except PlaywrightTimeout:  # the same lost first messages, at the kernel's start
        lab.reload()
    try:
        lab.run("%load_ext elelem_kernel")
        lab.run("remember the word quince").locator(FROZEN).wait_for()
        lab.run("remember the colour teal").locator(FROZEN).wait_for()
        assert len(notebook_metadata(lab)["conversations"]) == 1
        lab.restart()
        assert lab.page.evaluate(ANSWERS).startswith("answered")
        lab.run("%load_ext elelem_kernel")
        third = lab.run("which word and which colour?")
        third.locator(FROZEN).wait_for()
        shown = third.inner_text()
        where = lab.run("print('workspace:'").locator(".jp-OutputArea-output").inner_text()
        lab.shot("19-gateway-restored", third)
    finally:
        lab.page.context.close()
        gateway_lab.shutdown_kernels()
    assert "restored 2 turns from gateway.ipynb" in shown
    assert "no notebook file known" not in shown
    assert f"workspace: {gateway_lab.root}" in where
    assert ("assistant", "Noted: the word is quince.") in said(wire)
    assert ("assistant", "Noted: the colour is teal.") in said(wire)
    assert said(wire)[-1] == ("user", "which word and which colour?")
