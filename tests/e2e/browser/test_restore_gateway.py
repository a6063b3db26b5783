"""Restore through Kernel Gateway: the kernel runs elsewhere and cannot find the file itself.

`jupyter kernelgateway` starts kernels in its own folder with a bare environment (no
`JPY_SESSION_NAME`), and JupyterLab talks to it with `--gateway-url`. Without the
extension the kernel knows no notebook ("no notebook file known"); with it, an unsaved
notebook's two turns come back after a restart, and the workspace is the notebook's folder.
JupyterLab is configured as the installed package configures it: elelem's server extension
proxies the gateway's websockets with `ClosingGatewayConnection` (with jupyter_server's own
proxy the notebook now and then waits for its kernel after the restart; see
tests/e2e/test_gateway.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.browser.lab import write_notebook
from tests.e2e.browser.pages import FROZEN
from tests.e2e.browser.test_restore_extension import lab_env, notebook_metadata, open_page, said
from tests.e2e.gateway import Gateway, GatewayServer
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser

WORKSPACE = (
    "from elelem_kernel.jupyter.front import front_for\n"
    "print('workspace:', front_for(get_ipython()).session.workspace)"
)


class GatewayLab(GatewayServer):
    """JupyterLab whose kernels run on the gateway, through elelem's gateway proxy."""

    app = "jupyterlab"


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
    lab = open_page(browser, gateway_lab, shots).open(name, "gateway")
    try:
        lab.run("%load_ext elelem_kernel")
        lab.run("remember the word quince").locator(FROZEN).wait_for()
        lab.run("remember the colour teal").locator(FROZEN).wait_for()
        assert len(notebook_metadata(lab)["conversations"]) == 1
        lab.restart()
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
