"""Suite-wide fixtures and the order scripts/test.sh runs the tests in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kernel_transport import use_ipc

use_ipc()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME for one test (its ~/.agents: trust store, plugins, MCP config; its
    ~/.cache: MCP tool lists), not made yet: tmp_path/home. Tests in parallel never share
    the person's HOME."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    return tmp_path / "home"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Order the tests for the parallel workers: the browser tests last, and the slowest
    files first: packaging, tests/e2e/, tests/bench/ (`python -m bench --smoke`), and
    among the browser files those that start servers of their own.

    Playwright's sync API keeps an event loop running on the main thread until its
    session-scoped fixtures are torn down; any test after it that calls `asyncio.run()`
    would fail with "cannot be called from a running event loop". The slow files first:
    scripts/test.sh hands whole files to its parallel workers in this order
    (`--no-loadscope-reorder`), so the long ones overlap the many short ones instead of
    finishing alone at the end.
    """

    def order(item: pytest.Item) -> tuple[bool, bool, bool, bool]:
        browser = item.get_closest_marker("browser") is not None
        return (
            browser,
            browser and "lab" in item.fixturenames,  # the session's JupyterLab, not one of its own
            item.get_closest_marker("packaging") is None,
            not item.nodeid.startswith(("tests/e2e/", "tests/bench/")),
        )

    items.sort(key=order)


def pytest_deselected(items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker, note what -m, -k or --deselect left out, for the controller:
    xdist does not pass deselections on, so its summary would count none."""
    output = getattr(items[0].config, "workeroutput", None) if items else None
    if output is not None:
        output.setdefault("deselected", []).extend(item.nodeid for item in items)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object | None) -> None:
    """In the xdist controller, count the first worker's deselected tests in the summary
    (every worker collects the same tests, so one worker's list is the run's)."""
    deselected = getattr(node, "workeroutput", {}).get("deselected")
    reporter = node.config.pluginmanager.get_plugin("terminalreporter")
    if deselected and reporter is not None and "deselected" not in reporter.stats:
        reporter.stats["deselected"] = list(deselected)
