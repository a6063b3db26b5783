"""`elelem-kernel acp` at the byte level: hostile lines, files for stdin and stdout, and a
client that goes away mid-turn. The agent is the real command; the client is this test,
writing JSON-RPC lines by hand."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("acp")


from tests.acp.test_agent import AGENT  # noqa: E402
from tests.mcp import servers  # noqa: E402
from tests.wire_servers import Round, WireServer, reply  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def lines(*messages) -> str:
    return "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)


def answers(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]  # every line is JSON


def test_batches_null_numbers_and_bad_json_are_answered_and_the_agent_stays_up(home):
    sent = lines(
        [INIT],
        "null",
        "42",
        '"a string"',
        "[]",
        '{"jsonrpc":"2.0","id":{"a":1},"result":{}}',
        '{"jsonrpc":"2.0","id":5,"method":7}',
        "{this is not json",
        "[" * 100_000,
        {**INIT, "id": 9},
    )
    out = subprocess.run(
        [AGENT, "acp"], input=sent, env=home, capture_output=True, text=True, timeout=120
    )
    got = answers(out.stdout)
    errors = [m["error"]["code"] for m in got if "error" in m]
    assert errors == [-32600] * 7 + [-32700, -32600], got
    assert "batches are not used" in got[0]["error"]["message"]
    assert "not null" in got[1]["error"]["message"]
    assert got[0]["id"] is None and got[6]["id"] == 5
    [init] = [m for m in got if m.get("id") == 9]
    assert init["result"]["agentCapabilities"]["loadSession"] is True
    assert out.returncode == 0, out.stderr


def _strict(constant: str) -> float:
    raise AssertionError(f"the agent wrote {constant}, which is not JSON")


def test_ids_and_values_json_cannot_carry_are_refused_and_a_file_of_them_ends(tmp_path, home):
    """`1e400` parses as an infinite float, which no JSON answer can carry as its id; `NaN`
    and `Infinity` are not JSON. Each line is answered, in valid JSON, and a file of them
    ends (an unanswerable request used to be left unanswered, and the agent waited)."""
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        lines(
            INIT,
            '{"jsonrpc":"2.0","id":1e400,"method":"nope"}',
            '{"jsonrpc":"2.0","id":NaN,"method":"nope"}',
            '{"jsonrpc":"2.0","id":3,"method":"nope","params":{"n":-Infinity}}',
            {**INIT, "id": 9},
        )
    )
    with requests.open("rb") as stdin:
        out = subprocess.run(
            [AGENT, "acp"], stdin=stdin, env=home, capture_output=True, text=True, timeout=120
        )
    got = [json.loads(line, parse_constant=_strict) for line in out.stdout.splitlines()]
    errors = [(m["id"], m["error"]["code"]) for m in got if "error" in m]
    assert errors == [(None, -32600), (None, -32700), (None, -32700)], got
    said = [m["error"]["message"] for m in got if "error" in m]
    assert "finite" in said[0] and "NaN is not JSON" in said[1], said
    assert [m["id"] for m in got if "result" in m] == [1, 9]
    assert out.returncode == 0, out.stderr


def test_stdin_and_stdout_may_be_files(tmp_path, home, ws):
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        lines(
            INIT,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(ws), "mcpServers": []},
            },
            {"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}},
        )
    )
    out_path = tmp_path / "out.jsonl"
    with open(requests, "rb") as stdin, open(out_path, "wb") as stdout:
        done = subprocess.run(
            [AGENT, "acp"],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=home,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr.decode()
    got = {m["id"]: m for m in answers(out_path.read_text()) if "id" in m}
    assert got[1]["result"]["protocolVersion"] == 1
    session = got[2]["result"]["sessionId"]
    assert session in json.dumps(got[3]["result"])


def _children(pid: int) -> set[int]:
    """Every descendant of `pid`, from /proc."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = (task / "children").read_text().split()
            except OSError:
                continue
            for kid in map(int, kids):
                if kid not in found:
                    found.add(kid)
                    todo.append(kid)
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_client_going_away_mid_turn_leaves_no_process_behind(tmp_path, home, ws):
    clock = {
        "name": "clock",
        "command": servers.python_server("mcp-server-time"),
        "args": [],
        "env": [],
    }
    with WireServer() as wire:
        slow = reply("anthropic", Round(text="a long answer " * 20))
        wire.queue(slow.stall_after(slow.index("answer") + 1))
        env = {**home, **wire.env("anthropic")}
        agent = subprocess.Popen(
            [AGENT, "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(tmp_path / "agent-stderr.log", "wb"),
            env=env,
        )
        try:
            new = {"cwd": str(ws), "mcpServers": [clock]}
            agent.stdin.write(
                lines(
                    INIT, {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": new}
                ).encode()
            )
            agent.stdin.flush()
            session = None
            while session is None:
                message = json.loads(agent.stdout.readline())
                session = (
                    message.get("result", {}).get("sessionId") if message.get("id") == 2 else None
                )
            prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "time?"}]}
            agent.stdin.write(
                lines(
                    {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}
                ).encode()
            )
            agent.stdin.flush()
            while "agent_message_chunk" not in agent.stdout.readline().decode():
                pass
            deadline = time.monotonic() + 60
            while not _children(agent.pid) and time.monotonic() < deadline:
                time.sleep(0.05)  # the MCP server starts with the turn
            left = _children(agent.pid)
            assert left, "the client's MCP server did not start"
            agent.stdin.close()  # the client goes away
            agent.stdout.close()
            agent.wait(timeout=60)
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in left) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in left if _running(pid)]


def test_a_file_of_requests_is_answered_and_permissions_it_cannot_give_are_refused(
    tmp_path, home, ws, monkeypatch
):
    from elelem_kernel.store import acp_sessions as store

    monkeypatch.setenv(store.ENV, home["ELELEM_ACP_SESSIONS"])
    store.create("scripted", str(ws), "build")
    prompt = {"sessionId": "scripted", "prompt": [{"type": "text", "text": "write a file x.md"}]}
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        lines(
            INIT,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/load",
                "params": {"sessionId": "scripted", "cwd": str(ws), "mcpServers": []},
            },
        )
        + lines({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
    )
    env = {**home, "ELELEM_PROVIDER": "demo", "ELELEM_DEMO_DELAY": "0"}
    with open(requests, "rb") as stdin:
        done = subprocess.run(
            [AGENT, "acp"], stdin=stdin, capture_output=True, env=env, timeout=120
        )
    assert done.returncode == 0, done.stderr.decode()
    got = answers(done.stdout.decode())
    asked = [m for m in got if m.get("method") == "session/request_permission"]
    answer = {m["id"]: m for m in got if "method" not in m}[3]
    assert len(asked) == 1 and answer["result"]["stopReason"] == "end_turn"
    assert not (ws / "x.md").exists()


def test_a_client_that_stops_reading_mid_turn_ends_the_agent(home, ws):
    env = {**home, "ELELEM_PROVIDER": "demo"}
    agent = subprocess.Popen(
        [AGENT, "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        new = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(ws), "mcpServers": []},
        }
        agent.stdin.write(lines(INIT, new).encode())
        agent.stdin.flush()
        session = None
        while session is None:
            message = json.loads(agent.stdout.readline())
            session = message.get("result", {}).get("sessionId") if message.get("id") == 2 else None
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "answer slowly"}]}
        agent.stdin.write(
            lines(
                {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}
            ).encode()
        )
        agent.stdin.flush()
        while b"agent_message_chunk" not in agent.stdout.readline():
            pass
        agent.stdout.close()  # stdin stays open: only the reading end is gone
        assert agent.wait(timeout=60) == 0
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        agent.stdin.close()
