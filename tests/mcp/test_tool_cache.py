"""A server's tool list kept between sessions: the next session offers the tools without
starting the server, starts it when a tool is called, and a changed config or tool list
is never served stale; with a real MCP server (the flaky test server) in a real process."""

from __future__ import annotations

import json
import stat

from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.mcp import hub as hub_module
from elelem_kernel.mcp import tool_cache
from tests.mcp import servers
from tests.mcp.servers import write_config
from tests.scripted import Scripted, call, say


def offered(s) -> set[str]:
    return {t["function"]["name"] for t in s.toolbox.specs(s.mode)}


def new_process(tmp_path, n: int) -> hub_module.Hub:
    """What a new CLI process has: a hub with nothing running."""
    hub_module.shutdown()
    hub_module._hub = hub_module.Hub(logs=tmp_path / f"logs-{n}")
    return hub_module._hub


def test_the_next_session_offers_cached_tools_and_starts_the_server_only_when_called(
    home, ws, tmp_path
):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    first = new_session("echo", workspace=ws, mode="auto")
    first.run("hello")
    assert "mcp__flaky__ping" in offered(first)
    folder = home / ".cache" / "elelem-kernel" / "mcp-tools"
    [cached] = list(folder.iterdir())
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700  # its name is no one else's
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert "ping" in {t["name"] for t in json.loads(cached.read_text())["tools"]}

    hub = new_process(tmp_path, 2)
    second = new_session("echo", workspace=ws, mode="auto")
    second.facts.provider = Scripted(say("no tools needed"), call("mcp__flaky__ping"), say("done"))
    second.run("hello")
    assert "mcp__flaky__ping" in offered(second)
    assert hub.links["flaky"].state == "stopped"  # offered, not started
    assert not (tmp_path / "logs-2" / "flaky.log").exists()
    listing = second.command("/mcp")
    assert "known from an earlier session" in listing and "`mcp__flaky__ping`" in listing
    called = second.run("ping it")
    [record] = [c for r in called.record["rounds"] for c in r["calls"]]
    assert record["ok"] and "pong" in record["result"]
    assert hub.links["flaky"].state == "running"


def test_a_changed_config_is_not_served_from_the_cache(home, ws, tmp_path):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    new_session("echo", workspace=ws, mode="auto").run("hello")
    changed = {**servers.flaky("slow"), "env": {"FLAKY_FLAVOUR": "other"}}
    write_config(home / ".agents" / "mcp.json", {"flaky": changed})
    hub = new_process(tmp_path, 2)
    new_session("echo", workspace=ws, mode="auto").run("hello")
    assert hub.links["flaky"].state == "running"  # no list for this config: started


def test_a_changed_tool_list_is_cached_again(home, ws, tmp_path):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    first = new_session("echo", workspace=ws, mode="auto")
    first.facts.provider = Scripted(call("mcp__flaky__grow"), say("grown"), say("later"))
    first.run("grow")
    first.run("again")  # the server said its tools changed: listed again, cached again
    hub = new_process(tmp_path, 2)
    second = new_session("echo", workspace=ws, mode="auto")
    second.run("hello")
    assert "mcp__flaky__fresh" in offered(second) and hub.links["flaky"].state == "stopped"


def test_an_unreadable_cache_is_ignored(home, ws, tmp_path):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    new_session("echo", workspace=ws, mode="auto").run("hello")
    [cached] = list(tool_cache.folder().iterdir())
    cached.write_text("{not json")
    hub = new_process(tmp_path, 2)
    second = new_session("echo", workspace=ws, mode="auto")
    second.run("hello")
    assert hub.links["flaky"].state == "running" and "mcp__flaky__ping" in offered(second)
