"""Fixtures for the MCP tests: an isolated HOME and workspace, and a fresh hub per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem_kernel.mcp import hub as hub_module


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    (home / ".agents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))  # tool lists: this test's own
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
