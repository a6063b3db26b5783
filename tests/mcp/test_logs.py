"""A real MCP server's stderr log: private, bounded, redacted, removed at the end unless kept."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest

from elelem_kernel.mcp import hub as hub_module
from elelem_kernel.mcp import stderr_log
from tests.mcp import servers
from tests.mcp.servers import write_config
from tests.mcp.test_servers import calls, session
from tests.scripted import call, say

TOKEN = "tok-secret-4242-log"


def shout(home: Path, ws: Path, lines: int, width: int = 80):
    """A session whose flaky server prints `lines` lines holding its token to stderr."""
    entry = {**servers.flaky("crash"), "env": {"API_TOKEN": TOKEN}}
    write_config(home / ".agents" / "mcp.json", {"loud": entry})
    s = session(
        ws, call("mcp__loud__shout", {"lines": lines, "width": width}), say("done"), mode="auto"
    )
    result = s.run("shout")
    assert calls(result)[0]["ok"], calls(result)
    return s


@pytest.fixture
def own_hub(tmp_path, monkeypatch):
    """A hub as a session makes it (no folder given), its temporary folder under tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv(hub_module.LOGS_ENV, raising=False)
    hub_module.shutdown()
    hub_module._hub = hub = hub_module.Hub()
    return hub


def test_the_log_is_private_redacted_and_removed_when_the_session_closes(home, ws, own_hub):
    shout(home, ws, 5)
    folder, log = own_hub.logs, own_hub.links["loud"].log
    own_hub.wait(own_hub.stop_all(), 15)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    text = log.read_text()
    assert "line 4 token [redacted]" in text and TOKEN not in text
    hub_module.shutdown()
    assert not folder.exists()


def test_a_log_folder_the_person_names_is_kept(home, ws, tmp_path, monkeypatch):
    kept = tmp_path / "kept-logs"
    monkeypatch.setenv(hub_module.LOGS_ENV, str(kept))
    hub_module.shutdown()
    hub_module._hub = hub_module.Hub()
    shout(home, ws, 3)
    hub_module.shutdown()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700
    assert "line 2 token [redacted]" in (kept / "loud.log").read_text()


def test_a_flood_of_stderr_leaves_a_bounded_log(home, ws, own_hub, monkeypatch):
    monkeypatch.setattr(stderr_log, "MAX_BYTES", 20_000)
    shout(home, ws, 2_000, width=100)  # about 250 KB
    log = own_hub.links["loud"].log
    own_hub.wait(own_hub.stop_all(), 15)
    older = Path(f"{log}.1")
    assert log.stat().st_size <= 20_000 and older.stat().st_size <= 20_000
    assert "line 1999 token [redacted]" in log.read_text()
    assert TOKEN not in log.read_text() + older.read_text()
