"""A tiny MCP server (the SDK's MCPServer, once FastMCP) for what real servers cannot do on demand.

`python flaky_server.py crash`: the `boom` tool kills the server mid-call.
`python flaky_server.py slow`: the `wait` tool sleeps longer than any test timeout.
`python flaky_server.py hang`: never answers `initialize`.
In every mode `grow` adds a tool `fresh` and sends `notifications/tools/list_changed`,
`keyed` answers a structured result keyed by the server's `API_TOKEN`, and `shout` prints
lines holding `API_TOKEN` to stderr, and `pictures` answers many large PNGs (broken ones
too: a valid header over pixel data that does not decode).
"""

from __future__ import annotations

import os
import struct
import sys
import time
import zlib

mode = sys.argv[1] if len(sys.argv) > 1 else "crash"
if mode == "hang":
    print("hanging on purpose", file=sys.stderr, flush=True)
    time.sleep(600)

from mcp.server.mcpserver import Context, Image, MCPServer  # noqa: E402

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


@server.tool()
def pictures(count: int = 40, side: int = 3000, broken: bool = False) -> list[Image]:
    """`count` PNGs of `side` × `side` pixels; `broken`: their pixel data is not zlib."""
    return [Image(data=_png(side, broken), format="png")] * count


def _png(side: int, broken: bool) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    row = b"\x00" + bytes((40, 90, 160)) * side
    pixels = b"not zlib data" * 64 if broken else zlib.compress(row * side)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


server.run()
