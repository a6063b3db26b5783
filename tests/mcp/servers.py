"""Real MCP servers for the tests, and where they are.

The PyPI servers (`mcp-server-time`, `mcp-server-git`) come with the "test" extra; the npm
ones (`server-everything`, `server-filesystem`) with `npm ci` in `.cache/mcp-npm`, which
`scripts/setup.sh test` runs. Without node they skip, unless ELELEM_REQUIRE_BROWSER or CI
is set, where a missing server is a failure. `flaky_server.py` (written with the SDK's
the SDK's MCPServer) is only for what real servers cannot do on demand: crash, hang, be slow.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NPM_BIN = REPO / ".cache" / "mcp-npm" / "node_modules" / ".bin"
BIN = Path(sys.executable).parent
FLAKY = Path(__file__).with_name("flaky_server.py")


def need(path: Path) -> str:
    """`path` as a command, or skip (fail in CI) saying how to get it."""
    if path.exists() and shutil.which("node"):
        return str(path)
    why = f"{path.name} is not installed: run `bash scripts/setup.sh test` (needs node and npm)"
    if os.environ.get("ELELEM_REQUIRE_BROWSER") or os.environ.get("CI"):
        pytest.fail(why + " (required here: CI or ELELEM_REQUIRE_BROWSER is set)")
    pytest.skip(why)


def everything() -> str:
    return need(NPM_BIN / "mcp-server-everything")


def filesystem() -> str:
    return need(NPM_BIN / "mcp-server-filesystem")


def python_server(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is missing: it comes with the test extra (pip install -e '.[test]')")
    return str(path)


def flaky(mode: str) -> dict:
    """A stdio entry for the test server in `mode` (crash, slow, hang)."""
    return {"command": sys.executable, "args": [str(FLAKY), mode]}


def write_config(path: Path, servers: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def descendants_running(pid: int) -> list[str]:
    """Command lines of living processes started (directly or not) by `pid`."""
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [" ".join(c.cmdline()) for c in children if _alive(c)]


def running_with(marker: str) -> list[str]:
    """Command lines of living processes whose command line holds `marker`."""
    import psutil

    found = []
    for p in psutil.process_iter(["cmdline"]):
        line = " ".join(p.info.get("cmdline") or [])
        if marker in line and _alive(p):
            found.append(line)
    return found


def _alive(process) -> bool:
    import psutil

    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
