"""Serve the ACP agent on this process's stdin and stdout, with stdout kept for protocol.

Before anything else runs, the real stdout is duplicated for the protocol and file
descriptor 1 is pointed at stderr: a `print` in a plugin, a tool's child process or a
library's warning then lands on stderr instead of corrupting the JSON-RPC stream.
Logs go to stderr too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from typing import Any, BinaryIO

from acp import run_agent

from elelem_kernel.acp.agent import ElelemAgent

#: Largest JSON-RPC line read (a prompt with embedded files), as the SDK's own default.
LINE_LIMIT = 50 * 1024 * 1024


def serve(defaults: dict[str, Any]) -> int:
    """Run until the client closes stdin; the exit code."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="elelem-acp: %(levelname)s %(message)s"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per model request is noise
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    agent = ElelemAgent(defaults)
    try:
        asyncio.run(_run(agent, protocol))
    except KeyboardInterrupt:
        return 130
    finally:
        _shutdown_mcp()
    return 0


async def _run(agent: ElelemAgent, protocol: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, writing = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, protocol)
    writer = asyncio.StreamWriter(transport, writing, None, loop)
    try:
        await run_agent(agent, writer, reader)  # type: ignore[arg-type]
    finally:
        for live in agent.sessions.values():
            if live.turn is not None:
                live.turn.cancel()
                with contextlib.suppress(BaseException):
                    await live.turn


def _shutdown_mcp() -> None:
    """Stop the MCP servers this process started (the client's and the person's)."""
    if "elelem_kernel.mcp.hub" in sys.modules:
        from elelem_kernel.mcp.hub import shutdown  # loaded already: a session started servers

        shutdown()
