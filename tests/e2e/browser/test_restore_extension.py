"""The frontend route in a real JupyterLab: the extension hands the kernel its conversation.

An unsaved notebook (autosave off; the file on disk never gets a turn) runs two turns,
the kernel restarts, and the third turn's request to the model holds the first two: only
the extension can have told the kernel. Damaged records warn as from the file. With the
extension disabled, the file route still restores a saved notebook.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser.lab import REPO, LabServer, jupyter_env, write_notebook
from tests.e2e.browser.pages import FROZEN, VIEWPORT, Lab
from tests.wire_servers import Round, reply

pytestmark = pytest.mark.browser

BUILT = REPO / "elelem_kernel" / "labextension"
PLUGIN = "elelem-kernel:restore"
NO_AUTOSAVE = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False}}


def server(base: Path, root: Path, wire, shots: Path, *, enabled: bool) -> LabServer:
    """A JupyterLab of its own with the extension built from this tree, enabled or not."""
    env = lab_env(base, wire, enabled=enabled)
    log = shots / f"jupyterlab-{'with' if enabled else 'without'}-extension.log"
    return LabServer(root, env, log).start()


def lab_env(base: Path, wire, *, enabled: bool) -> dict[str, str]:
    """A private Jupyter world (lab.py) where the extension built from this tree is
    installed (a link, as scripts/build_labextension.sh makes), enabled or disabled."""
    if not (BUILT / "package.json").is_file():
        pytest.skip("the JupyterLab extension is not built: bash scripts/build_labextension.sh")
    env = jupyter_env(base, ELELEM_DEMO_DELAY="0", **wire.env("openai"))
    link = Path(env["JUPYTER_PATH"]) / "labextensions" / "elelem-kernel"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(BUILT, target_is_directory=True)
    for name, value in NO_AUTOSAVE.items():
        target = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(value))
    listed = labextension(env, "list")
    assert "elelem-kernel" in listed and "enabled" in listed, listed
    if not enabled:
        labextension(env, "disable", "--level=user", "elelem-kernel")
        assert "disabled" in labextension(env, "list").split("elelem-kernel", 1)[1][:80]
    return env


def labextension(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def ext_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ext-root")


@pytest.fixture(scope="module")
def with_extension(shots, wire, ext_root, tmp_path_factory) -> Iterator[LabServer]:
    lab = server(tmp_path_factory.mktemp("jupyter-ext"), ext_root, wire, shots, enabled=True)
    yield lab
    lab.stop()


@pytest.fixture(scope="module")
def without_extension(shots, wire, ext_root, tmp_path_factory) -> Iterator[LabServer]:
    lab = server(tmp_path_factory.mktemp("jupyter-noext"), ext_root, wire, shots, enabled=False)
    yield lab
    lab.stop()


def open_page(browser, lab: LabServer, shots: Path) -> Lab:
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    return Lab(context.new_page(), lab, shots)


def has_plugin(lab: Lab) -> bool:
    return lab.page.evaluate(f"() => window.jupyterapp.hasPlugin({PLUGIN!r})")


def notebook_metadata(lab: Lab) -> dict:
    return lab.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.model.getMetadata('elelem') || {}"
    )


def records_on_disk(path: Path) -> int:
    return path.read_text().count('"elelem": {')


def said(wire) -> list[tuple[str, str]]:
    return [(m["role"], str(m.get("content"))) for m in wire.requests[-1].body["messages"]]


def test_an_unsaved_notebook_keeps_its_conversation_across_a_restart(
    browser, with_extension, wire, ext_root, shots
):
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(text="Noted: the word is avocado.")),
        reply("openai", Round(text="Noted: the number is 42.")),
        reply("openai", Round(text="Avocado and 42.")),
    )
    name = write_notebook(
        ext_root / "unsaved.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai\nremember the word avocado",
            "%%elelem -p openai\nremember the number 42",
            "%%elelem -p openai\nwhich word and which number?",
        ],
    )
    lab = open_page(browser, with_extension, shots).open(name, "unsaved")
    try:
        assert has_plugin(lab)
        lab.run("%load_ext elelem_kernel")
        lab.run("remember the word avocado").locator(FROZEN).wait_for()
        lab.run("remember the number 42").locator(FROZEN).wait_for()
        summary = notebook_metadata(lab)
        assert summary["provider"] == "openai" and summary["record_version"] == 1
        assert len(summary["conversations"]) == 1
        assert summary["active"] == summary["conversations"][0]
        lab.restart()

        lab.run("%load_ext elelem_kernel")
        third = lab.run("which word and which number?")
        third.locator(FROZEN).wait_for()
        assert "restored 2 turns from unsaved.ipynb" in third.inner_text()
        lab.shot("19-unsaved-restored", third)
    finally:
        lab.page.context.close()
        with_extension.shutdown_kernels()
    assert records_on_disk(ext_root / "unsaved.ipynb") == 0  # never saved: not the file route
    assert ("user", "remember the word avocado") in said(wire)
    assert ("assistant", "Noted: the word is avocado.") in said(wire)
    assert ("assistant", "Noted: the number is 42.") in said(wire)
    assert said(wire)[-1] == ("user", "which word and which number?")


def test_damaged_records_from_the_open_notebook_warn_as_from_the_file(
    browser, with_extension, wire, ext_root, shots
):
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(text="First answer.")),
        reply("openai", Round(text="Second answer.")),
        reply("openai", Round(text="Third answer.")),
    )
    name = write_notebook(
        ext_root / "damaged.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai\nfirst question",
            "%%elelem -p openai\nsecond question",
            "%%elelem -p openai\nthird question",
        ],
    )
    lab = open_page(browser, with_extension, shots).open(name, "damaged")
    try:
        lab.run("%load_ext elelem_kernel")
        lab.run("first question").locator(FROZEN).wait_for()
        lab.run("second question").locator(FROZEN).wait_for()
        damage = """() => {
          const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
          const outputs = cells.get(2).outputs;
          for (let i = 0; i < outputs.length; i++) {
            const output = outputs.get(i).toJSON();
            if (output.metadata && output.metadata.elelem) {
              output.metadata.elelem = {...output.metadata.elelem, v: 99};
              outputs.set(i, output);
            }
          }
        }"""
        lab.page.evaluate(damage)
        lab.restart()
        lab.run("%load_ext elelem_kernel")
        third = lab.run("third question")
        third.locator(FROZEN).wait_for()
        shown = third.inner_text()
        lab.shot("19-damaged-warned", third)
    finally:
        lab.page.context.close()
        with_extension.shutdown_kernels()
    assert "restored 1 turn from damaged.ipynb" in shown
    assert "newer elelem-kernel" in shown
    users = [text for role, text in said(wire) if role == "user"]
    assert users == ["first question", "third question"]


def test_without_the_extension_the_saved_file_still_restores(
    browser, without_extension, wire, ext_root, shots
):
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(text="Noted: the word is papaya.")),
        reply("openai", Round(text="You asked me to remember papaya.")),
    )
    name = write_notebook(
        ext_root / "saved.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai\nremember the word papaya",
            "%%elelem -p openai\nwhich word did I ask you to remember?",
        ],
    )
    lab = open_page(browser, without_extension, shots).open(name, "saved")
    try:
        assert not has_plugin(lab)
        lab.run("%load_ext elelem_kernel")
        lab.run("remember the word papaya").locator(FROZEN).wait_for()
        lab.save()
        lab.restart()
        lab.run("%load_ext elelem_kernel")
        second = lab.run("which word did I ask you to remember?")
        second.locator(FROZEN).wait_for()
        assert "restored 1 turn from saved.ipynb" in second.inner_text()
        assert notebook_metadata(lab) == {}  # nobody keeps the summary without the extension
    finally:
        lab.page.context.close()
        without_extension.shutdown_kernels()
    assert ("user", "remember the word papaya") in said(wire)
    assert ("assistant", "Noted: the word is papaya.") in said(wire)


class NotebookServer(LabServer):
    """Notebook 7 (`jupyter notebook`) instead of JupyterLab, in the same private world."""

    def command(self) -> list[str]:
        argv = super().command()
        argv[argv.index("jupyterlab")] = "notebook"
        argv[argv.index("--LabApp.expose_app_in_browser=True")] = (
            "--JupyterNotebookApp.expose_app_in_browser=True"
        )
        return argv

    def lab_url(self, notebook: str, workspace: str) -> str:
        return f"{self.url}/notebooks/{notebook}?token={self.token}"


@pytest.fixture(scope="module")
def notebook7(shots, wire, ext_root, tmp_path_factory) -> Iterator[NotebookServer]:
    pytest.importorskip("notebook", reason="Notebook 7 tests need `pip install notebook`")
    env = lab_env(tmp_path_factory.mktemp("jupyter-nb7"), wire, enabled=True)
    server = NotebookServer(ext_root, env, shots / "notebook7.log").start()
    yield server
    server.stop()


def test_notebook_7_restores_an_unsaved_notebook_too(browser, notebook7, wire, ext_root, shots):
    wire.requests.clear()
    wire.queue(
        reply("openai", Round(text="Noted: the word is mango.")),
        reply("openai", Round(text="Noted: the day is Tuesday.")),
        reply("openai", Round(text="Mango on Tuesday.")),
    )
    name = write_notebook(
        ext_root / "nb7.ipynb",
        [
            "%load_ext elelem_kernel",
            "%%elelem -p openai\nremember the word mango",
            "%%elelem -p openai\nremember the day Tuesday",
            "%%elelem -p openai\nwhich word and which day?",
        ],
    )
    lab = open_page(browser, notebook7, shots).open(name, "nb7")
    try:
        assert has_plugin(lab)
        lab.run("%load_ext elelem_kernel")
        lab.run("remember the word mango").locator(FROZEN).wait_for()
        lab.run("remember the day Tuesday").locator(FROZEN).wait_for()
        lab.restart()
        lab.run("%load_ext elelem_kernel")
        third = lab.run("which word and which day?")
        third.locator(FROZEN).wait_for()
        shown = third.inner_text()
        lab.shot("19-notebook7-restored", third)
    finally:
        lab.page.context.close()
        notebook7.shutdown_kernels()
    assert "restored 2 turns from nb7.ipynb" in shown
    assert records_on_disk(ext_root / "nb7.ipynb") == 0
    assert ("assistant", "Noted: the word is mango.") in said(wire)
    assert said(wire)[-1] == ("user", "which word and which day?")
