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

from tests.e2e.browser.lab import extension_env, said, scripted_turns
from tests.e2e.browser.pages import opened
from tests.e2e.gateway import Gateway, GatewayServer

# 600 s: a module's first test also waits for the JupyterLab it starts, slow on a loaded machine
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

WORKSPACE = (
    "from elelem_kernel.jupyter.shell_front import front_for\n"
    "print('workspace:', front_for(get_ipython()).session.workspace)"
)


class GatewayLab(GatewayServer):
    """JupyterLab whose kernels run on the gateway, through elelem's gateway proxy."""

    app = "jupyterlab"


@pytest.fixture(scope="module")
def gateway_lab(shots, wire, tmp_path_factory) -> Iterator[GatewayLab]:
    root = tmp_path_factory.mktemp("gateway-lab-root")
    elsewhere = tmp_path_factory.mktemp("gateway-kernels")
    env = extension_env(tmp_path_factory.mktemp("jupyter-gw"), wire, enabled=True)
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
    exchanges = [
        ("remember the word quince", "Noted: the word is quince."),
        ("remember the colour teal", "Noted: the colour is teal."),
        ("which word and which colour?", "Quince and teal."),
    ]
    name = scripted_turns(wire, gateway_lab.root / "gateway.ipynb", exchanges, WORKSPACE)
    with opened(browser, gateway_lab, shots, name, "gateway") as lab:
        lab.turns("remember the word quince", "remember the colour teal")
        assert len(lab.notebook_metadata("elelem")["conversations"]) == 1
        lab.restart()
        third = lab.resume("which word and which colour?")
        shown = third.inner_text()
        where = lab.run("print('workspace:'").locator(".jp-OutputArea-output").inner_text()
        lab.shot("19-gateway-restored", third)
    assert "restored" not in shown  # said live only, never saved with the cell
    assert "no notebook file known" not in shown
    assert f"workspace: {gateway_lab.root}" in where
    assert ("assistant", "Noted: the word is quince.") in said(wire)
    assert ("assistant", "Noted: the colour is teal.") in said(wire)
    assert said(wire)[-1] == ("user", "which word and which colour?")
