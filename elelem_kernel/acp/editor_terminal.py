"""`bash` in the editor's terminal, when the ACP client offers `terminal/*`.

The approved command runs as `bash -c COMMAND` in a terminal the client creates in the
workspace, so the person watches it live in the tool call; the agent waits for it to
exit (killing it at the tool's timeout or when the turn is cancelled), reads its output
and releases it. The output is asked of the client within the tool's own limit, and cut
to it here too (its head and tail, as the disk tool keeps them): a client may send more.
The result has the disk tool's shape. A client that cannot create the terminal leaves the command to the
ordinary tool, which runs it in the agent's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.acp.updates import Updates
from elelem_kernel.agent.toolset import Rerouted
from elelem_kernel.text import clip_middle
from elelem_kernel.tools.bounds import MAX_BYTES
from elelem_kernel.tools.shell import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from elelem_kernel.acp.client import AcpClient

log = logging.getLogger("elelem_kernel.acp")
#: What the disk tool sets too: no pager waiting for a key, no git asking for a password.
ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class ClientTerminal:
    """`bash` for one session, through its ACP client's terminals."""

    def __init__(
        self,
        client: AcpClient,
        session_id: str,
        workspace: Callable[[], Path],
        updates: Callable[[], Updates | None],
    ):
        self.client = client
        self.session_id = session_id
        self.workspace = workspace
        self.updates = updates

    def toolset(self) -> Rerouted:
        """The toolset that runs `bash` in the client's terminal, with the disk tool's
        function as its fallback."""
        return Rerouted("the editor's terminal", {"bash": self._bash})

    def _bash(self, disk: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        async def bash(args: dict[str, Any]) -> Any:
            try:
                terminal = await self.client.create_terminal(
                    self.session_id,
                    "bash",
                    ["-c", args["command"]],
                    str(self.workspace()),
                    ENV,
                    MAX_BYTES,
                )
            except Exception as e:  # no terminal here: the command runs as on the command line
                log.info("the client could not create a terminal (%s); running bash here", e)
                return await disk(args)
            view = self.updates()
            if view is not None:
                view.terminal(terminal)
            try:
                return await self._run(terminal, float(args.get("timeout", DEFAULT_TIMEOUT)))
            finally:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.client.release_terminal(self.session_id, terminal))

        return bash

    async def _run(self, terminal: str, timeout: float) -> dict[str, Any]:
        timed_out = False
        try:
            await asyncio.wait_for(
                self.client.wait_for_terminal_exit(self.session_id, terminal), timeout
            )
        except asyncio.TimeoutError:
            timed_out = True
            await self.client.kill_terminal(self.session_id, terminal)
        except asyncio.CancelledError:  # the turn was stopped: so is the command
            with contextlib.suppress(Exception):
                await asyncio.shield(self.client.kill_terminal(self.session_id, terminal))
            raise
        shown = await self.client.terminal_output(self.session_id, terminal)
        output = shown.output
        result: dict[str, Any] = {
            "exit_code": shown.exit_code,
            "stdout": clip_middle(output, MAX_BYTES),
            "stderr": "",
            "note": "ran in the editor's terminal: stdout and stderr are together in stdout",
        }
        if shown.signal:
            result["signal"] = shown.signal
        if shown.truncated or len(output) > MAX_BYTES:
            kept = "only the end" if shown.truncated else "its head and tail"
            result["truncated"] = (
                f"the output was cut: {kept} is shown. Redirect the output to a file "
                "and use read or grep on it."
            )
        if timed_out:
            result["error"] = f"timed out: killed after {timeout:g} s"
        return result
