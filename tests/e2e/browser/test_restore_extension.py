"""The frontend route in a real JupyterLab: the extension hands the kernel its conversation.

An unsaved notebook (autosave off; the file on disk never gets a turn) runs two turns,
the kernel restarts, and the third turn's request to the model holds the first two: only
the extension can have told the kernel. Damaged records warn as from the file. With the
extension disabled, the file route still restores a saved notebook
(test_restore_without_extension.py); Notebook 7 restores too (test_restore_notebook7.py).
Each file starts its own server, so parallel workers can take them apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser.lab import LabServer, extension_env, said, scripted_turns
from tests.e2e.browser.pages import opened

# 600 s: a module's first test also waits for the JupyterLab it starts, slow on a loaded machine
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

PLUGIN = "elelem-kernel:restore"


def server(base: Path, root: Path, wire, shots: Path, *, enabled: bool) -> LabServer:
    """A JupyterLab of its own with the extension built from this tree, enabled or not."""
    env = extension_env(base, wire, enabled=enabled)
    log = shots / f"jupyterlab-{'with' if enabled else 'without'}-extension.log"
    return LabServer(root, env, log).start()


@pytest.fixture(scope="module")
def with_extension(shots, wire, ext_root, tmp_path_factory) -> Iterator[LabServer]:
    lab = server(tmp_path_factory.mktemp("jupyter-ext"), ext_root, wire, shots, enabled=True)
    yield lab
    lab.stop()


def records_on_disk(path: Path) -> int:
    return path.read_text().count('"elelem": {')


def test_an_unsaved_notebook_keeps_its_conversation_across_a_restart(
    browser, with_extension, wire, ext_root, shots
):
    exchanges = [
        ("remember the word avocado", "Noted: the word is avocado."),
        ("remember the number 42", "Noted: the number is 42."),
        ("which word and which number?", "Avocado and 42."),
    ]
    name = scripted_turns(wire, ext_root / "unsaved.ipynb", exchanges)
    with opened(browser, with_extension, shots, name, "unsaved") as lab:
        assert lab.has_plugin(PLUGIN)
        lab.turns("remember the word avocado", "remember the number 42")
        summary = lab.notebook_metadata("elelem")
        assert summary["provider"] == "openai" and summary["record_version"] == 1
        assert len(summary["conversations"]) == 1
        assert summary["active"] == summary["conversations"][0]
        lab.restart()

        third = lab.resume("which word and which number?")
        # the restore is news for the live view only, never saved with the cell (the
        # wire below shows the turns came back)
        assert "restored" not in third.inner_text()
        lab.shot("19-unsaved-restored", third)
    assert records_on_disk(ext_root / "unsaved.ipynb") == 0  # never saved: not the file route
    assert ("user", "remember the word avocado") in said(wire)
    assert ("assistant", "Noted: the word is avocado.") in said(wire)
    assert ("assistant", "Noted: the number is 42.") in said(wire)
    assert said(wire)[-1] == ("user", "which word and which number?")


def test_damaged_records_from_the_open_notebook_warn_as_from_the_file(
    browser, with_extension, wire, ext_root, shots
):
    exchanges = [
        ("first question", "First answer."),
        ("second question", "Second answer."),
        ("third question", "Third answer."),
    ]
    name = scripted_turns(wire, ext_root / "damaged.ipynb", exchanges)
    with opened(browser, with_extension, shots, name, "damaged") as lab:
        lab.turns("first question", "second question")
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
        third = lab.resume("third question")
        shown = third.inner_text()
        lab.shot("19-damaged-warned", third)
    assert "restored 1 turn from damaged.ipynb" in shown
    assert "newer elelem-kernel" in shown
    users = [text for role, text in said(wire) if role == "user"]
    assert users == ["first question", "third question"]
