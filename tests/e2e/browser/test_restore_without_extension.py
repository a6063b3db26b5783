"""With the JupyterLab extension disabled, the file route still restores a saved notebook.

The same route with the extension enabled is test_restore_extension.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.browser.lab import LabServer, said, scripted_turns
from tests.e2e.browser.pages import opened
from tests.e2e.browser.test_restore_extension import PLUGIN, server

# 600 s: a module's first test also waits for the JupyterLab it starts, slow on a loaded machine
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def without_extension(shots, wire, ext_root, tmp_path_factory) -> Iterator[LabServer]:
    lab = server(tmp_path_factory.mktemp("jupyter-noext"), ext_root, wire, shots, enabled=False)
    yield lab
    lab.stop()


def test_without_the_extension_the_saved_file_still_restores(
    browser, without_extension, wire, ext_root, shots
):
    exchanges = [
        ("remember the word papaya", "Noted: the word is papaya."),
        ("which word did I ask you to remember?", "You asked me to remember papaya."),
    ]
    name = scripted_turns(wire, ext_root / "saved.ipynb", exchanges)
    with opened(browser, without_extension, shots, name, "saved") as lab:
        assert not lab.has_plugin(PLUGIN)
        lab.turns("remember the word papaya")
        lab.save()
        lab.restart()
        second = lab.resume("which word did I ask you to remember?")
        assert "restored" not in second.inner_text()  # said live only, never saved
        assert (
            lab.notebook_metadata("elelem") == {}
        )  # nobody keeps the summary without the extension
    assert ("user", "remember the word papaya") in said(wire)
    assert ("assistant", "Noted: the word is papaya.") in said(wire)
