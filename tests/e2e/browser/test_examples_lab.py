"""Every example notebook, Run All in JupyterLab as a person does
(tests/e2e/browser/examples.py says what fails a run)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.browser.examples import EXAMPLES, ExamplesServer, run_all, serve

# 600 s: a module's first test also waits for the JupyterLab it starts, slow on a loaded machine
# One rerun: ipykernel can drop a comm-subshell message when the page deletes the subshell
# mid-message ("coroutine ... run_in_context was never awaited"), leaving a cell waiting.
# A kernel race outside this package, seen about once in a full run; a real failure fails twice.
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600), pytest.mark.flaky(reruns=1)]


@pytest.fixture(scope="module")
def server(shots, wire, tmp_path_factory) -> Iterator[ExamplesServer]:
    yield from serve("lab", shots, wire, tmp_path_factory)


@pytest.mark.parametrize("notebook", EXAMPLES)
def test_run_all_in_jupyterlab(browser, server, shots, notebook):
    run_all(browser, server, shots, notebook)
