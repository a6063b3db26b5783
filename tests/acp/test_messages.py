"""Every message the agent sends is ACP as the SDK's schema models have it.

The agent builds its messages as plain JSON (acp/messages.py), so nothing but these tests
holds them to the schema. A whole session (every kind of update, every request the agent
makes of a client, every answer) runs through the real `elelem-kernel acp` process and
the Python SDK's client; each raw message the agent sent is validated against its model
in `acp.schema` and must come back from it unchanged: a field the schema does not know
(a misspelled key) would otherwise be dropped without a word.
"""

from __future__ import annotations

import asyncio
import json
import select
import subprocess
import sys

import pytest

acp = pytest.importorskip("acp")

from acp import text_block  # noqa: E402
from acp.connection import StreamDirection, StreamEvent  # noqa: E402
from acp.schema import (  # noqa: E402
    CreateTerminalRequest,
    InitializeResponse,
    KillTerminalRequest,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    ReadTextFileRequest,
    ReleaseTerminalRequest,
    RequestPermissionRequest,
    SessionNotification,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TerminalOutputRequest,
    WaitForTerminalExitRequest,
    WriteTextFileRequest,
)
from pydantic import BaseModel  # noqa: E402

from elelem_kernel.acp import messages  # noqa: E402
from tests.acp.test_agent import AGENT, Recorder, run, start  # noqa: E402
from tests.wire_servers import Round, WireServer  # noqa: E402

#: The model of the params of each request and notification the agent sends.
SENT = {
    "session/update": SessionNotification,
    "session/request_permission": RequestPermissionRequest,
    "fs/read_text_file": ReadTextFileRequest,
    "fs/write_text_file": WriteTextFileRequest,
    "terminal/create": CreateTerminalRequest,
    "terminal/output": TerminalOutputRequest,
    "terminal/wait_for_exit": WaitForTerminalExitRequest,
    "terminal/kill": KillTerminalRequest,
    "terminal/release": ReleaseTerminalRequest,
}
#: The model of the agent's answer to each request of the client's.
ANSWERS = {
    "initialize": InitializeResponse,
    "session/new": NewSessionResponse,
    "session/load": LoadSessionResponse,
    "session/list": ListSessionsResponse,
    "session/prompt": PromptResponse,
    "session/set_mode": SetSessionModeResponse,
    "session/set_config_option": SetSessionConfigOptionResponse,
}
UPDATES = {
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "usage_update",
}


def as_schema_has_it(model: type[BaseModel], value: object) -> None:
    """`value` validates as `model` and comes back from it unchanged."""
    parsed = model.model_validate(value)
    back = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert back == value, (model.__name__, value, back)


class Tap:
    """Every message on the connection, as the JSON it was (before the SDK parses it)."""

    def __init__(self) -> None:
        self.sent: list[dict] = []  #: by the agent
        self.asked: dict[object, str] = {}  #: the client's request ids -> their methods

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.INCOMING:
            self.sent.append(message)
        elif "method" in message and "id" in message:
            self.asked[message["id"]] = message["method"]


def test_every_message_of_a_whole_session_is_as_the_schema_has_it(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(thinking="Reading first.", calls=[("read", {"path": "notes.txt"})]),
            Round(calls=[("edit", {"path": "notes.txt", "old": "two", "new": "TWO"})]),
            Round(text="Edited."),
            Round(calls=[("bash", {"command": "echo hi"})]),
            Round(calls=[("bash", {"command": "sleep 30", "timeout": 1})]),
            Round(text="Plan:\n- [x] read\n- [ ] test"),
        )
        client = Recorder(answers=["allow"])
        client.buffers[str(ws / "notes.txt")] = "one\ntwo\nthree\n"
        tap = Tap()

        async def main():
            env = {**home, **wire.env("anthropic")}
            with open(tmp_path / "agent-stderr.log", "ab") as log:
                async with acp.spawn_agent_process(
                    client,
                    AGENT,
                    "acp",
                    env=env,
                    transport_kwargs={"stderr": log, "shutdown_timeout": 30.0},
                    observers=[tap],
                ) as (conn, _):
                    _, new = await start(conn, ws, fs=True, terminal=True)
                    sid = new.session_id
                    await conn.set_session_mode(session_id=sid, mode_id="verify")
                    await conn.set_config_option(config_id="mode", session_id=sid, value="build")
                    await conn.prompt(session_id=sid, prompt=[text_block("edit")])
                    await conn.set_config_option(config_id="mode", session_id=sid, value="auto")
                    await conn.prompt(session_id=sid, prompt=[text_block("run")])
                    await conn.prompt(session_id=sid, prompt=[text_block("/mode verify")])
                    await conn.list_sessions()
                    await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])

        run(main())
    methods, updates, answered = set(), set(), set()
    for message in tap.sent:
        assert message["jsonrpc"] == "2.0"
        if "method" in message:
            methods.add(message["method"])
            as_schema_has_it(SENT[message["method"]], message["params"])
            if message["method"] == "session/update":
                updates.add(message["params"]["update"]["sessionUpdate"])
        else:
            assert "error" not in message, message
            method = tap.asked[message["id"]]
            answered.add(method)
            as_schema_has_it(ANSWERS[method], message["result"])
    assert updates == UPDATES
    assert methods == set(SENT)
    assert answered == set(ANSWERS)


def test_the_builders_make_what_the_schema_has():
    updates = [
        messages.agent_text("hi"),
        messages.thought_text("hmm"),
        messages.user_text("asked"),
        messages.tool_call(
            "c1",
            start=True,
            title="edit a.txt",
            kind="edit",
            status="pending",
            locations=[messages.location("/w/a.txt", 3), messages.location("/w/b.txt")],
            raw_input={"path": "a.txt"},
        ),
        messages.tool_call(
            "c1",
            status="completed",
            content=[
                messages.diff_content("/w/a.txt", "new\n", "old\n"),
                messages.diff_content("/w/c.txt", "created\n"),
                messages.terminal_content("term-1"),
                messages.text_content("done"),
            ],
            raw_output={"ok": True, "lines": [1, 2]},
        ),
        messages.plan([messages.plan_entry("step"), messages.plan_entry("done", "completed")]),
        messages.commands_update(
            [{"name": "mode", "description": "switch", "input": {"hint": "[MODE]"}}]
        ),
        messages.mode_update("plan"),
        messages.config_update(
            [
                {
                    "type": "select",
                    "id": "mode",
                    "name": "Mode",
                    "category": "mode",
                    "currentValue": "plan",
                    "options": [{"value": "plan", "name": "Plan"}],
                }
            ]
        ),
        messages.usage_update(1200, 200_000, 0.25),
        messages.usage_update(1, 2),
    ]
    for update in updates:
        as_schema_has_it(SessionNotification, {"sessionId": "s", "update": update})


NO_SDK = """
import atexit, os, sys
def report():
    with open(os.environ["IMPORTED"], "w") as out:
        out.write(" ".join(sorted(sys.modules)))
atexit.register(report)
from elelem_kernel.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_agent_imports_neither_the_sdk_nor_pydantic(tmp_path, home, ws):
    """A whole turn (the demo model reads and lists files), and a saved session loaded:
    neither the ACP SDK nor pydantic is imported, here or in a thread."""
    imported = tmp_path / "imported.txt"
    script = tmp_path / "agent.py"
    script.write_text(NO_SDK)
    env = {**home, "IMPORTED": str(imported), "ELELEM_DEMO_DELAY": "0"}
    client = Recorder()

    async def main():
        async with acp.spawn_agent_process(
            client, sys.executable, str(script), "acp", "-p", "demo", env=env
        ) as (conn, _):
            _, new = await start(conn, ws)
            prompt = [text_block("What is in notes.txt?")]
            answer = await conn.prompt(session_id=new.session_id, prompt=prompt)
            await conn.load_session(cwd=str(ws), session_id=new.session_id, mcp_servers=[])
            return answer

    answer = run(main())
    assert answer.stop_reason == "end_turn" and client.of("tool_call")
    modules = imported.read_text().split()
    assert "elelem_kernel.acp.agent" in modules and "elelem_kernel.providers.demo" in modules
    assert not [m for m in modules if m.split(".")[0] in ("acp", "pydantic", "pydantic_core")]


GATED = """
import os, sys, time
from importlib.abc import MetaPathFinder

class Gate(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "elelem_kernel.acp.agent":
            while not os.path.exists(sys.argv[1]):
                time.sleep(0.02)
        return None

sys.meta_path.insert(0, Gate())
from elelem_kernel.cli import main
sys.exit(main(["acp"]))
"""


def test_initialize_is_answered_before_the_agents_module_has_loaded(tmp_path, home, ws):
    gate = tmp_path / "agent-may-load"
    process = subprocess.Popen(
        [sys.executable, "-c", GATED, str(gate)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=home,
        cwd=tmp_path,
    )
    try:
        new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(ws)}}
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        }
        process.stdin.write(f"{json.dumps(hello)}\n{json.dumps(new)}\n".encode())
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "no answer to initialize while the agent's module was not loaded"
        answer = json.loads(process.stdout.readline())
        gate.touch()
        session = json.loads(process.stdout.readline())
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1
    expected = InitializeResponse.model_validate(answer["result"])
    assert expected.agent_capabilities.load_session is True
    assert expected.protocol_version == acp.PROTOCOL_VERSION
    assert session["id"] == 2 and session["result"]["sessionId"]


def answers_to(home, *lines: str) -> list[dict]:
    """What `elelem-kernel acp` answers to `lines` (stdin then closed): every line is JSON."""
    out = subprocess.run(
        [AGENT, "acp"],
        input="".join(f"{line}\n" for line in lines),
        env=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_json_rpc_errors_name_what_is_wrong(home, ws):
    requests = [
        {"id": 1, "method": "initialize", "params": {"protocolVersion": "1"}},
        {"id": 2, "method": "session/new", "params": ["not", "an", "object"]},
        {"id": 3, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": [7]}},
        {"id": 4, "method": "session/prompt", "params": {"sessionId": "s", "prompt": "hi"}},
        {"id": 5, "method": "_elelem/anything", "params": {}},
        {"method": "session/whatever", "params": {}},  # a notification: never answered
        {"method": "session/cancel", "params": {"sessionId": "nope"}},
        {"id": 6, "method": "session/cancel", "params": {"sessionId": "nope"}},
        {"id": "seven", "method": "session/list"},
    ]
    got = answers_to(home, *(json.dumps({"jsonrpc": "2.0", **r}) for r in requests))
    by_id = {m["id"]: m for m in got}
    assert sorted(by_id, key=str) == [1, 2, 3, 4, 5, 6, "seven"], got
    codes = {k: m["error"]["code"] for k, m in by_id.items() if "error" in m}
    assert codes == {1: -32602, 2: -32602, 3: -32602, 4: -32602, 5: -32601, 6: -32601}
    said = {k: m["error"]["message"] for k, m in by_id.items() if "error" in m}
    assert "protocolVersion must be an integer" in said[1]
    assert "session/new takes an object" in said[2]
    assert "mcpServers[0] must be an object" in said[3]
    assert "prompt must be a list" in said[4]
    assert by_id["seven"]["result"] == {"sessions": []}


def test_a_line_longer_than_the_limit_is_refused_and_the_next_is_answered(home):
    from elelem_kernel.acp.serve import LINE_LIMIT

    hello = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
    huge = '{"jsonrpc":"2.0","id":0,"method":"x","params":"' + "x" * LINE_LIMIT + '"}'
    refused, answered = answers_to(home, huge, hello)
    assert (
        refused["error"]["code"] == -32600 and "longer than 50 MiB" in refused["error"]["message"]
    )
    assert answered["id"] == 1 and answered["result"]["protocolVersion"] == 1


def test_the_agents_requests_to_a_client_that_has_gone_fail_at_once():
    from elelem_kernel.acp.jsonrpc import Connection

    async def main():
        written: list[bytes] = []

        async def write(data: bytes) -> None:
            written.append(data)

        async def handler(method, params, notification):
            return None

        connection = Connection(handler, write)
        asked = asyncio.ensure_future(connection.request("fs/read_text_file", {"path": "/a"}))
        await asyncio.sleep(0)
        connection.receive({"jsonrpc": "2.0", "id": 0, "result": {"content": "text"}})
        first = await asked
        pending = asyncio.ensure_future(connection.request("fs/read_text_file", {"path": "/b"}))
        await asyncio.sleep(0)
        await connection.close()
        with pytest.raises(ConnectionError):
            await pending
        return first, [json.loads(line) for line in written]

    first, written = asyncio.run(main())
    assert first == {"content": "text"}
    assert [m["id"] for m in written] == [0, 1]
    assert written[0] == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "fs/read_text_file",
        "params": {"path": "/a"},
    }


def test_an_answer_that_is_not_json_is_an_internal_error_and_text_stays_ascii():
    from elelem_kernel.acp.jsonrpc import Connection

    async def main():
        written: list[bytes] = []

        async def write(data: bytes) -> None:
            written.append(data)

        async def handler(method, params, notification):
            return {"nan": float("nan")} if method == "bad" else {"text": "é \udcff"}

        connection = Connection(handler, write)
        connection.receive({"jsonrpc": "2.0", "id": 1, "method": "bad", "params": {}})
        connection.receive({"jsonrpc": "2.0", "id": 2, "method": "good", "params": {}})
        while connection.running():
            await asyncio.sleep(0)
        return written

    bad, good = asyncio.run(main())
    assert json.loads(bad)["error"]["code"] == -32603
    assert good.isascii() and json.loads(good)["result"] == {"text": "é \udcff"}
