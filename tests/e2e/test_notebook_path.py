"""A relative ELELEM_NOTEBOOK is relative to the folder the kernel started in."""

from __future__ import annotations

import io

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from elelem_kernel import cli
from elelem_kernel.cli import install_command
from tests.e2e.kernels import isolated_env, run, texts

pytestmark = pytest.mark.kernel


def test_a_relative_notebook_path_survives_a_chdir(tmp_path, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    nbformat.write(nbformat.v4.new_notebook(), folder / "nb.ipynb")
    assert cli.main(["ask", "-p", "echo", "--notebook", "nb.ipynb", "remember PELICAN"]) == 0

    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    env = isolated_env(
        folder, JUPYTER_PATH=str(prefix / "share" / "jupyter"), ELELEM_NOTEBOOK="nb.ipynb"
    )
    monkeypatch.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
    km, kc = start_new_kernel(kernel_name="elelem", env=env, cwd=str(folder))
    try:
        reply, _ = run(kc, "%%py\nimport os\nos.chdir(os.path.expanduser('~'))")
        assert reply["content"]["status"] == "ok"
        _, msgs = run(kc, "and now?")
        shown = texts(msgs)
        assert "restored 1 turn" in shown, shown
        _, msgs = run(kc, "/load")
        assert str(folder / "nb.ipynb") in texts(msgs)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_gateway_working_dir_is_where_the_kernel_works_and_the_turn_says_so(
    tmp_path, monkeypatch
):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    elsewhere = tmp_path / "gateway"
    elsewhere.mkdir()
    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    env = isolated_env(
        folder, JUPYTER_PATH=str(prefix / "share" / "jupyter"), KERNEL_WORKING_DIR=str(folder)
    )
    monkeypatch.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
    km, kc = start_new_kernel(kernel_name="elelem", env=env, cwd=str(elsewhere))
    try:
        _, msgs = run(kc, "%%py\nimport os\nprint(os.getcwd())")
        assert str(folder) in texts(msgs)
        _, msgs = run(kc, "where am I?")
        assert f"workspace: `{folder}` (the notebook's folder is not known here)" in texts(msgs)
        _, msgs = run(kc, "and again?")
        assert "workspace:" not in texts(msgs)  # said once
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
