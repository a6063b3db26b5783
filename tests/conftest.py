"""Suite-wide test ordering."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list
) -> None:
    """Run the browser tests last.

    Playwright's sync API keeps an event loop running on the main thread until its
    session-scoped fixtures are torn down; any test after it that calls `asyncio.run()`
    would fail with "cannot be called from a running event loop".
    """
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
