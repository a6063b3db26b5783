"""Fixtures for the MCP tests: an isolated HOME and workspace, and a fresh hub per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_kernel.mcp import hub as hub_module


@pytest.fixture
def home(home: Path) -> Path:
    """The private HOME of tests/conftest.py, with its ~/.agents folder made."""
    (home / ".agents").mkdir(parents=True)
    return home


@pytest.fixture
def ws(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture(autouse=True)
def fresh_hub(tmp_path):
    """Each test gets its own hub (logs under tmp_path); its servers stop afterwards."""
    hub_module.shutdown()
    hub_module._hub = hub_module.Hub(logs=tmp_path / "mcp-logs")
    yield hub_module._hub
    hub_module.shutdown()
