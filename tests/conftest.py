"""Suite-wide fixtures, test ordering, and the parts scripts/test.sh runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME for one test (its ~/.agents: trust store, plugins, MCP config; its
    ~/.cache: MCP tool lists), not made yet: tmp_path/home. Tests in parallel never share
    the person's HOME."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    return tmp_path / "home"


#: ELELEM_TEST_PART: which part of the suite this pytest runs (scripts/test.sh sets it).
PART = "ELELEM_TEST_PART"


def in_serial_part(item: pytest.Item) -> bool:
    """Whether scripts/test.sh runs `item` alone, after the parallel part: a `serial` test."""
    return item.get_closest_marker("serial") is not None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Keep only this part's tests (ELELEM_TEST_PART), then order them for the workers.

    With ELELEM_TEST_PART=parallel only the tests that may share the machine are kept, with
    `serial` only the others. The rest are dropped before pytest's -m and -k see the
    items, so they are not counted as deselected (the other part runs them): what
    pytest says was deselected is what the person's own -m or -k left out.

    Then the browser tests go last, and the slowest files first: packaging, tests/e2e/, and
    among the browser files those that start servers of their own.

    Playwright's sync API keeps an event loop running on the main thread until its
    session-scoped fixtures are torn down; any test after it that calls `asyncio.run()`
    would fail with "cannot be called from a running event loop". The slow files first:
    scripts/test.sh hands whole files to its parallel workers in this order
    (`--no-loadscope-reorder`), so the long ones overlap the many short ones instead of
    finishing alone at the end.
    """

    part = os.environ.get(PART, "")
    if part not in ("", "parallel", "serial"):
        raise pytest.UsageError(f"{PART}={part!r}: expected parallel or serial (or unset)")
    if part:
        items[:] = [item for item in items if in_serial_part(item) == (part == "serial")]

    def order(item: pytest.Item) -> tuple[bool, bool, bool, bool]:
        browser = item.get_closest_marker("browser") is not None
        return (
            browser,
            browser and "lab" in item.fixturenames,  # the session's JupyterLab, not one of its own
            item.get_closest_marker("packaging") is None,
            not item.nodeid.startswith("tests/e2e/"),
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
