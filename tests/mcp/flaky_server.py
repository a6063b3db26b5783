"""A tiny MCP server (the SDK's MCPServer, once FastMCP) for what real servers cannot do on demand.

`python flaky_server.py crash`: the `boom` tool kills the server mid-call.
`python flaky_server.py slow`: the `wait` tool sleeps longer than any test timeout.
`python flaky_server.py hang`: never answers `initialize`.
In every mode `grow` adds a tool `fresh` and sends `notifications/tools/list_changed`,
`keyed` answers a structured result keyed by the server's `API_TOKEN`, and `shout` prints
lines holding `API_TOKEN` to stderr.
"""

from __future__ import annotations

import os
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "crash"
if mode == "hang":
    print("hanging on purpose", file=sys.stderr, flush=True)
    time.sleep(600)

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402

server = MCPServer("flaky")


@server.tool()
def boom() -> str:
    """Crash the server."""
    print("about to crash: flaky server exits mid-call", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def wait(seconds: float = 30) -> str:
    """Sleep, then answer."""
    import anyio

    await anyio.sleep(seconds)
    return "woke up"


@server.tool()
def ping() -> str:
    """Answer pong."""
    return f"pong from {os.getpid()}"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `fresh` and say the tool list changed."""
    server.add_tool(lambda: "fresh and new", name="fresh", description="Added at run time.")
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool()
def keyed() -> dict[str, str]:
    """A structured result whose key is the server's API_TOKEN."""
    return {os.environ.get("API_TOKEN", "unset"): "the value"}


@server.tool()
def shout(lines: int = 10, width: int = 80) -> str:
    """Print `lines` lines holding the server's API_TOKEN to stderr."""
    token = os.environ.get("API_TOKEN", "unset")
    for i in range(lines):
        sys.stderr.write(f"line {i} token {token} {'x' * width}\n")
    sys.stderr.flush()
    return f"shouted {lines}"


server.run()
