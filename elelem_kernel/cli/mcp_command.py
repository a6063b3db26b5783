"""`elelem-kernel mcp`: start the configured MCP servers, show them, stop them."""

from __future__ import annotations

import asyncio
import sys

from elelem_kernel.visible import visible


def run(workspace: str | None, start: bool) -> int:
    """Show each server's source, state and tools; 1 when one failed or a config is bad."""
    from elelem_kernel.agent.policy import Policy  # lazy: only this command needs them
    from elelem_kernel.assembly.sessions import new_session
    from elelem_kernel.mcp import config as mcp_config
    from elelem_kernel.mcp.attachment import report
    from elelem_kernel.mcp.hub import shutdown

    session = new_session("echo", workspace=workspace, mode="auto", policy=Policy())
    state = session.mcp
    if state is None:
        print("elelem: no MCP attachment: a plugin replaced the mcp setup", file=sys.stderr)
        return 1
    try:
        notices = asyncio.run(state.refresh(start_all=True)) if start else []
        for notice in notices:
            print(f"elelem: {visible(notice)}", file=sys.stderr)
        print(visible(report(state)))
    finally:
        shutdown()
    _, problems = mcp_config.load(session.workspace)
    return 1 if notices or problems else 0
