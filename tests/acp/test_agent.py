"""`elelem-kernel acp` driven by the ACP SDK's own client side (`spawn_agent_process`).

The agent is the real command in a real process; the model is the loopback Anthropic wire
server, scripted round by round; the client is a small `acp.Client` that records every
`session/update` and answers permission requests from a queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from asyncio.subprocess import PIPE, STDOUT
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import RequestError, spawn_agent_process, text_block  # noqa: E402
from acp.schema import (  # noqa: E402
    AllowedOutcome,
    ClientCapabilities,
    ClientSessionCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    McpServerStdio,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.mcp import servers  # noqa: E402
from tests.wire_servers import Round, WireServer, reply  # noqa: E402

AGENT = str(Path(sys.executable).parent / "elelem-kernel")


class Recorder:
    """An ACP client: records updates, answers permission requests from `answers`."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[Any] = []
        self.asked: list[tuple[Any, list[Any]]] = []
        self.answers = list(answers or [])
        self.buffers: dict[str, str] = {}  #: the editor's open buffers (fs/* methods)
        self.written: list[tuple[str, str]] = []
        self.terminals: dict[str, Any] = {}  #: terminal id -> (process, its output task)
        self.released: list[str] = []
        self.log: list[tuple[str, Any]] = []  #: ("update", update) and ("ask", call id), in order

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.asked.append((tool_call, options))
        self.log.append(("ask", tool_call.tool_call_id))
        answer = self.answers.pop(0) if self.answers else "cancel"
        if answer == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)
        self.log.append(("update", update))

    async def read_text_file(self, path, session_id, line=None, limit=None, **kwargs):
        if path not in self.buffers:
            raise RequestError(-32002, f"no buffer for {path}")
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, content, path, session_id, **kwargs):
        self.written.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(self, command, session_id, args=None, cwd=None, env=None, **kwargs):
        variables = {**os.environ, **{e.name: e.value for e in env or []}}
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=variables, stdout=PIPE, stderr=STDOUT
        )
        terminal = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal] = (process, asyncio.create_task(process.stdout.read()))
        return CreateTerminalResponse(terminal_id=terminal)

    async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
        process, _ = self.terminals[terminal_id]
        return WaitForTerminalExitResponse(exit_code=await process.wait())

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        process, output = self.terminals[terminal_id]
        await process.wait()
        status = TerminalExitStatus(
            exit_code=process.returncode if process.returncode >= 0 else None
        )
        text = (await output).decode()
        return TerminalOutputResponse(output=text, truncated=False, exit_status=status)

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        self.terminals[terminal_id][0].kill()

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        self.released.append(terminal_id)

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


async def start(conn, ws: Path, fs: bool = False, terminal: bool = False, **kwargs):
    """initialize and session/new; the client advertises `session` capabilities (it
    knows `usage_update`) unless `usage=False`."""
    files = FileSystemCapabilities(read_text_file=fs, write_text_file=fs)
    session = ClientSessionCapabilities() if kwargs.get("usage", True) else None
    capabilities = ClientCapabilities(fs=files, terminal=terminal, session=session)
    init = await conn.initialize(protocol_version=1, client_capabilities=capabilities)
    new = await conn.new_session(cwd=str(ws), mcp_servers=kwargs.get("mcp_servers", []))
    return init, new


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 180))


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
            async with agent(client, env, tmp_path) as conn:
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


@contextlib.asynccontextmanager
async def agent(client, env, tmp_path, *args):
    """`elelem-kernel acp ARGS` as a client spawns it; its stderr goes to a log file.

    The SDK gives the agent 2 s to exit after stdin closes, then terminates it; on a loaded
    machine a clean exit that stops an MCP server can take longer, and the SDK's terminate
    then races the exit (ProcessLookupError), so the tests give it 30 s."""
    with open(tmp_path / "agent-stderr.log", "ab") as log:
        transport = {"stderr": log, "shutdown_timeout": 30.0}
        async with spawn_agent_process(
            client, AGENT, "acp", *args, env=env, transport_kwargs=transport
        ) as (conn, _):
            yield conn


def test_permission_allow_shows_the_diff_and_deny_leaves_the_file(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(calls=[("edit", {"path": "notes.txt", "old": "two", "new": "TWO"})]),
            Round(calls=[("write", {"path": "new.txt", "content": "fresh\n"})]),
            Round(text="Edited one, the other was refused."),
        )
        client = Recorder(answers=["allow", "deny"])

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws)
                return await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])

        answer = run(main())
    assert answer.stop_reason == "end_turn"
    assert (ws / "notes.txt").read_text() == "one\nTWO\nthree\n"
    assert not (ws / "new.txt").exists()
    (edit, edit_options), (write, _) = client.asked
    assert [o.kind for o in edit_options] == ["allow_once", "allow_always", "reject_once"]
    assert edit.kind == "edit" and edit.title == "edit notes.txt"
    assert edit.locations[0].path == str(ws / "notes.txt") and edit.locations[0].line == 2
    diff, preview = edit.content
    assert (diff.type, diff.path) == ("diff", str(ws / "notes.txt"))
    assert (diff.old_text, diff.new_text) == ("one\ntwo\nthree\n", "one\nTWO\nthree\n")
    assert "-two" in preview.content.text and "+TWO" in preview.content.text
    assert write.content[0].old_text is None and write.content[0].new_text == "fresh\n"

    finished = [u for u in client.of("tool_call_update") if u.status in ("completed", "failed")]
    assert [u.status for u in finished] == ["completed", "failed"]
    assert finished[0].content[0].type == "diff"
    assert finished[0].content[0].new_text == "one\nTWO\nthree\n"
    assert "did not allow" in finished[1].content[0].content.text


def test_files_are_read_and_written_through_the_editor_when_it_offers(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(calls=[("read", {"path": "notes.txt"})]),
            Round(calls=[("edit", {"path": "notes.txt", "old": "unsaved", "new": "saved"})]),
            Round(calls=[("write", {"path": "../outside.txt", "content": "x"})]),
            Round(text="Done."),
        )
        client = Recorder(answers=["allow", "allow"])
        client.buffers[str(ws / "notes.txt")] = "one\nunsaved two\n"

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws, fs=True)
                return await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])

        answer = run(main())
        sent = [json.dumps(q.body) for q in wire.requests]
    assert answer.stop_reason == "end_turn"
    assert "unsaved two" in sent[1]  # the model read the buffer, not the file on disk
    assert client.written == [(str(ws / "notes.txt"), "one\nsaved two\n")]
    assert (ws / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert "outside the workspace" in sent[3] or "outside" in sent[3]
    assert not (tmp_path / "outside.txt").exists()


def test_bash_runs_in_the_editors_terminal_when_it_offers(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(calls=[("bash", {"command": "echo from-the-terminal; pwd; exit 3"})]),
            Round(calls=[("bash", {"command": "sleep 60", "timeout": 1})]),
            Round(text="Done."),
        )
        client = Recorder()

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws, terminal=True)
                await conn.set_session_mode(session_id=new.session_id, mode_id="auto")
                return await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])

        answer = run(main())
        first, second = (
            json.loads(q.body["messages"][-1]["content"][0]["content"]) for q in wire.requests[1:]
        )
    assert answer.stop_reason == "end_turn"
    assert first["exit_code"] == 3 and first["stdout"] == f"from-the-terminal\n{ws}\n"
    assert second["ok"] is False and "timed out: killed after 1 s" in second["error"]
    assert client.released == ["term-1", "term-2"]
    shown = [u for u in client.of("tool_call_update") if u.content]
    assert shown[0].content[0].type == "terminal" and shown[0].content[0].terminal_id == "term-1"


def test_cancel_ends_a_streaming_turn_and_the_session_goes_on(tmp_path, home, ws):
    with WireServer() as wire:
        slow = reply("anthropic", Round(text="a long answer " * 20))
        wire.queue(slow.stall_after(slow.index("answer") + 1))
        wire.script("anthropic", Round(text="Still here."))
        client = Recorder()

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws)
                sid = new.session_id
                turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
                while not client.of("agent_message_chunk"):
                    await asyncio.sleep(0.05)
                with pytest.raises(RequestError) as busy:
                    await conn.prompt(session_id=sid, prompt=[text_block("again")])
                await conn.cancel(session_id=sid)
                first = await turn
                second = await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
                return busy.value, first, second

        busy, first, second = run(main())
    assert busy.code == -32600 and "already running" in str(busy)
    assert first.stop_reason == "cancelled"
    assert second.stop_reason == "end_turn" and client.text().endswith("Still here.")


def test_modes_switch_by_request_and_by_slash_command(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(calls=[("write", {"path": "x.txt", "content": "x"})]),
            Round(text="Could not write in plan mode."),
        )
        client = Recorder()

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws)
                sid = new.session_id
                with pytest.raises(RequestError) as bad:
                    await conn.set_session_mode(session_id=sid, mode_id="yolo")
                await conn.set_session_mode(session_id=sid, mode_id="plan")
                planned = await conn.prompt(session_id=sid, prompt=[text_block("write x")])
                switched = await conn.prompt(session_id=sid, prompt=[text_block("/mode auto")])
                return bad.value, planned, switched

        bad, planned, switched = run(main())
        tools = [t["name"] for t in wire.requests[0].body["tools"]]
    assert bad.code == -32602 and "unknown mode 'yolo'" in str(bad)
    assert "write" not in tools and "read" in tools
    assert planned.stop_reason == switched.stop_reason == "end_turn"
    assert client.asked == []
    assert not (ws / "x.txt").exists()
    assert [u.current_mode_id for u in client.of("current_mode_update")] == ["auto"]
    [options] = client.of("config_option_update")
    assert [(o.id, o.current_value) for o in options.config_options][0] == ("mode", "auto")


def test_a_session_loads_in_a_new_process_and_is_listed(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(text="The answer is 42."),
            Round(text="You asked that."),
            Round(text="Twice now."),
        )
        env = {**home, **wire.env("anthropic")}
        first, second = Recorder(), Recorder()

        async def main():
            async with agent(first, env, tmp_path) as conn:
                _, new = await start(conn, ws)
                await conn.prompt(session_id=new.session_id, prompt=[text_block("What is it?")])
            async with agent(second, env, tmp_path) as conn:
                await conn.initialize(protocol_version=1)
                with pytest.raises(RequestError) as missing:
                    await conn.load_session(cwd=str(ws), session_id="nope", mcp_servers=[])
                with pytest.raises(RequestError) as bad_id:
                    await conn.load_session(cwd=str(ws), session_id="../x", mcp_servers=[])
                await conn.load_session(cwd=str(ws), session_id=new.session_id, mcp_servers=[])
                replayed = list(second.updates)
                await conn.prompt(session_id=new.session_id, prompt=[text_block("Again?")])
                listed = await conn.list_sessions()
                return new.session_id, missing.value, bad_id.value, replayed, listed

        sid, missing, bad_id, replayed, listed = run(main())
        saved = tmp_path / "sessions" / f"{sid}.ipynb"
        asked = subprocess.run(
            [AGENT, "ask", "--notebook", str(saved), "And now?"],
            env=env,
            cwd=ws,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        sent = wire.requests[1].body["messages"]
        continued = wire.requests[2].body["messages"]
    assert missing.code == -32002 and "no saved session 'nope'" in str(missing)
    assert bad_id.code == -32602 and "invalid session id" in str(bad_id)
    kinds = [u.session_update for u in replayed]
    assert kinds[:2] == ["user_message_chunk", "agent_message_chunk"]
    assert replayed[0].content.text == "What is it?" and "42" in replayed[1].content.text
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "42" in json.dumps(sent[1])
    [info] = listed.sessions
    assert (info.session_id, info.cwd, info.title) == (sid, str(ws), "What is it?")

    assert asked.returncode == 0, asked.stderr  # the CLI continues the editor's session
    assert [m["role"] for m in continued] == ["user", "assistant"] * 2 + ["user"]
    out = subprocess.run([AGENT, "acp", "--list"], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and sid in out.stdout and "3 turns" in out.stdout


def test_a_client_provided_mcp_server_serves_a_tool(tmp_path, home, ws):
    time_server = McpServerStdio(
        name="clock", command=servers.python_server("mcp-server-time"), args=[], env=[]
    )
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(calls=[("mcp__clock__get_current_time", {"timezone": "UTC"})]),
            Round(text="It is now."),
        )
        client = Recorder()

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws, mcp_servers=[time_server])
                return await conn.prompt(session_id=new.session_id, prompt=[text_block("time?")])

        answer = run(main())
        tools = [t["name"] for t in wire.requests[0].body["tools"]]
    assert answer.stop_reason == "end_turn"
    assert "mcp__clock__get_current_time" in tools
    [call] = client.of("tool_call")
    assert call.kind == "read" and call.title.startswith("mcp__clock__get_current_time")
    done = client.of("tool_call_update")[-1]
    assert done.status == "completed" and "UTC" in done.content[0].content.text


def test_bad_client_input_gets_clear_json_rpc_errors(tmp_path, home, ws):
    client = Recorder()
    bad_server = McpServerStdio(
        name="x", command="", args=[], env=[EnvVariable(name="A", value="1")]
    )

    async def main():
        async with agent(client, home, tmp_path) as conn:
            await conn.initialize(protocol_version=1)
            errors = []
            for call in (
                conn.new_session(cwd="relative/folder", mcp_servers=[]),
                conn.new_session(cwd=str(ws / "missing"), mcp_servers=[]),
                conn.new_session(cwd=str(ws), mcp_servers=[bad_server]),
                conn.prompt(session_id="nope", prompt=[text_block("hi")]),
                conn.set_config_option(config_id="colour", session_id="nope", value="x"),
            ):
                with pytest.raises(RequestError) as error:
                    await call
                errors.append(error.value)
            new = await conn.new_session(cwd=str(ws), mcp_servers=[])
            keyless = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
            return errors, keyless

    errors, keyless = run(main())
    relative, missing, server, unknown, unknown_option = errors
    assert keyless.stop_reason == "end_turn"
    assert "**Error:** anthropic needs an API key: set ANTHROPIC_API_KEY" in client.text()
    assert relative.code == missing.code == server.code == -32602
    assert "cwd must be the absolute path of an existing folder" in str(relative)
    assert "mcpServers: server 'x'" in str(server) and '"command"' in str(server)
    assert unknown.code == unknown_option.code == -32002
    assert "unknown session 'nope'" in str(unknown)


def test_without_the_sdk_the_agent_answers_and_import_stays_cheap(home):
    code = (
        "import sys; sys.modules['acp'] = sys.modules['pydantic'] = None\n"
        "import elelem_kernel.acp\n"
        "from elelem_kernel.cli import main\n"
        "sys.exit(main(['acp']))"
    )
    hello = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    out = subprocess.run(
        [sys.executable, "-c", code], input=hello, env=home, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"]["agentCapabilities"]["loadSession"] is True
    code = "import sys, elelem_kernel.acp, elelem_kernel.store.acp_sessions; print('acp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_stdout_carries_only_protocol_and_malformed_messages_get_errors(tmp_path, home, ws):
    plugins = Path(home["HOME"]) / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "noisy.py").write_text("print('a plugin printing to stdout')\n")
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}',
        "this is not json",
        '{"jsonrpc":"2.0","id":2,"method":"session/fly","params":{}}',
        '{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"mcpServers":[]}}',
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "session/new",
                "params": {"cwd": str(ws), "mcpServers": []},
            }
        ),
    ]
    out = subprocess.run(
        [AGENT, "acp"],
        input="\n".join(lines) + "\n",
        env=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    messages = [json.loads(line) for line in out.stdout.splitlines()]  # every line is JSON
    answers = {m["id"]: m for m in messages if "id" in m}
    assert answers[1]["result"]["agentCapabilities"]["loadSession"] is True
    assert answers[2]["error"]["code"] == -32601
    assert answers[3]["error"]["code"] == -32602 and "cwd" in json.dumps(answers[3]["error"])
    assert answers[4]["result"]["sessionId"]
    assert "a plugin printing to stdout" in out.stderr
