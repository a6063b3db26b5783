"""`elelem-kernel acp` driven by the ACP SDK's own client side (`spawn_agent_process`).

The agent is the real command in a real process; the model is the loopback Anthropic wire
server, scripted round by round; the client is a small `acp.Client` that records every
`session/update` and answers permission requests from a queue.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import spawn_agent_process, text_block  # noqa: E402
from acp.schema import (  # noqa: E402
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    RequestPermissionResponse,
)

from tests.wire_servers import Round, WireServer  # noqa: E402

AGENT = str(Path(sys.executable).parent / "elelem-kernel")


class Recorder:
    """An ACP client: records updates, answers permission requests from `answers`."""

    def __init__(self, answers: list[str] | None = None):
        self.updates: list[Any] = []
        self.asked: list[tuple[Any, list[Any]]] = []
        self.answers = list(answers or [])
        self.first_update = asyncio.Event()

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.asked.append((tool_call, options))
        answer = self.answers.pop(0) if self.answers else "cancel"
        if answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)
        self.first_update.set()

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


@pytest.fixture
def home(tmp_path) -> dict[str, str]:
    """The agent's environment: its own HOME (no person's plugins) and sessions folder."""
    home = tmp_path / "home"
    (home / ".agents").mkdir(parents=True)
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "ELELEM_ACP_SESSIONS": str(tmp_path / "sessions"),
        "ELELEM_PROVIDER": "anthropic",
    }


@pytest.fixture
def ws(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one\ntwo\nthree\n")
    return ws


async def session(client, env, tmp_path, *args, fs=False):
    """Spawn the agent; (connection, process) context after initialize."""
    log = open(tmp_path / "agent-stderr.log", "ab")  # noqa: SIM115 - closed with the process
    context = spawn_agent_process(
        client, AGENT, "acp", *args, env=env, transport_kwargs={"stderr": log}
    )
    return context, log


async def start(conn, ws: Path, **kwargs):
    init = await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    new = await conn.new_session(cwd=str(ws), mcp_servers=kwargs.get("mcp_servers", []))
    return init, new


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_a_turn_with_a_tool_call_streams_updates_and_is_kept_as_a_notebook(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(thinking="Let me look.", calls=[("read", {"path": "notes.txt"})]),
            Round(text="It lists one, two and three."),
        )
        env = {**home, **wire.env("anthropic")}
        client = Recorder()

        async def main():
            async with spawn_agent_process(
                client, AGENT, "acp", env=env, transport_kwargs={"stderr": _log(tmp_path)}
            ) as (conn, _):
                init, new = await start(conn, ws)
                answer = await conn.prompt(
                    session_id=new.session_id, prompt=[text_block("What is in notes.txt?")]
                )
                return init, new, answer

        init, new, answer = run(main())
    caps = init.agent_capabilities
    assert caps.load_session is True and init.auth_methods == []
    assert caps.prompt_capabilities.embedded_context is True
    assert new.modes.current_mode_id == "build"
    assert [m.id for m in new.modes.available_modes] == ["plan", "build", "verify", "auto"]
    assert answer.stop_reason == "end_turn"
    assert answer.usage.input_tokens == 24 and answer.usage.output_tokens == 14

    assert client.text("agent_thought_chunk") == "Let me look."
    assert client.text() == "It lists one, two and three."
    [start_call] = client.of("tool_call")
    assert start_call.kind == "read" and start_call.title == "read notes.txt"
    assert start_call.locations[0].path == str(ws / "notes.txt")
    assert start_call.raw_input == {"path": "notes.txt"}
    done = client.of("tool_call_update")[-1]
    assert done.status == "completed" and "two" in done.content[0].content.text
    commands = client.of("available_commands_update")[0].available_commands
    assert {"mode", "help", "tools"} <= {c.name for c in commands}
    [usage] = client.of("usage_update")
    assert usage.size > usage.used > 0

    [saved] = (tmp_path / "sessions").glob("*.ipynb")
    assert saved.stem == new.session_id
    notebook = json.loads(saved.read_text())
    assert notebook["metadata"]["elelem_acp"]["cwd"] == str(ws)
    record = notebook["cells"][-1]["outputs"][0]["metadata"]["elelem"]
    assert record["prompt"] == "What is in notes.txt?"
    assert record["rounds"][0]["calls"][0]["name"] == "read"


def _log(tmp_path: Path):
    return open(tmp_path / "agent-stderr.log", "ab")  # noqa: SIM115 - the agent's stderr
