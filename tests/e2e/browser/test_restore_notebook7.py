"""Notebook 7 (`jupyter notebook`) restores an unsaved notebook through the extension too.

The same route as test_restore_extension.py, in Notebook 7's frontend.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.browser.lab import NotebookServer, extension_env, said, scripted_turns
from tests.e2e.browser.pages import opened
from tests.e2e.browser.test_restore_extension import PLUGIN, records_on_disk

# 600 s: a module's first test also waits for the JupyterLab it starts, slow on a loaded machine
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def notebook7(shots, wire, ext_root, tmp_path_factory) -> Iterator[NotebookServer]:
    pytest.importorskip("notebook", reason="Notebook 7 tests need `pip install notebook`")
    env = extension_env(tmp_path_factory.mktemp("jupyter-nb7"), wire, enabled=True)
    server = NotebookServer(ext_root, env, shots / "notebook7.log").start()
    yield server
    server.stop()


def test_notebook_7_restores_an_unsaved_notebook_too(browser, notebook7, wire, ext_root, shots):
    exchanges = [
        ("remember the word mango", "Noted: the word is mango."),
        ("remember the day Tuesday", "Noted: the day is Tuesday."),
        ("which word and which day?", "Mango on Tuesday."),
    ]
    name = scripted_turns(wire, ext_root / "nb7.ipynb", exchanges)
    with opened(browser, notebook7, shots, name, "nb7") as lab:
        assert lab.has_plugin(PLUGIN)
        lab.turns("remember the word mango", "remember the day Tuesday")
        lab.restart()
        third = lab.resume("which word and which day?")
        shown = third.inner_text()
        lab.shot("19-notebook7-restored", third)
    assert "restored" not in shown  # said live only, never saved with the cell
    assert records_on_disk(ext_root / "nb7.ipynb") == 0
    assert ("assistant", "Noted: the word is mango.") in said(wire)
    assert said(wire)[-1] == ("user", "which word and which day?")
