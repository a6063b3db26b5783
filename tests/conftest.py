"""Suite-wide fixtures and test ordering."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME for one test (its ~/.agents: trust store, plugins, MCP config; its
    ~/.cache: MCP tool lists), not made yet: tmp_path/home. Tests in parallel never share
    the person's HOME."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    return tmp_path / "home"


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list
) -> None:
    """Run the browser tests last, and the slowest files (packaging, tests/e2e/) first.

    Playwright's sync API keeps an event loop running on the main thread until its
    session-scoped fixtures are torn down; any test after it that calls `asyncio.run()`
    would fail with "cannot be called from a running event loop". The slow files first:
    scripts/test.sh hands whole files to its parallel workers in this order
    (`--no-loadscope-reorder`), so the long ones overlap the many short ones instead of
    finishing alone at the end.
    """

    def order(item: pytest.Item) -> tuple[bool, bool, bool]:
        return (
            item.get_closest_marker("browser") is not None,
            item.get_closest_marker("packaging") is None,
            not item.nodeid.startswith("tests/e2e/"),
        )

    items.sort(key=order)
