"""Whole turns over real HTTP: the CLI's block stream and the session after faults."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from elelem_kernel.assembly.sessions import new_session
from tests.wire_servers import FORMATS, Round, WireServer, error_event, error_reply, reply

SECRET = "sk-SECRET-0123456789"
FAST = {"retries": 2, "backoff": 0.01, "read_timeout": 1.0}


@pytest.fixture
def server():
    with WireServer() as s:
        yield s


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "README.md").write_text("# Wire test\n")
    return tmp_path


@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_json_block_stream_over_each_wire_format(fmt, server, workspace):
    server.script(
        fmt,
        Round(
            thinking="Look first.",
            text="Reading.",
            calls=[("read", {"path": "README.md"}), ("list", {})],
        ),
        Round(text="It is a wire test ✓."),
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(server.env(fmt), HOME=str(workspace))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "elelem_kernel.cli",
            "ask",
            "--json",
            "-p",
            fmt,
            "--mode",
            "plan",
            "what is this?",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        input="",
    )
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    starts = [(e["index"], e["block"]) for e in events if e["type"] == "block_start"]
    assert starts == [
        (0, "thinking"),
        (1, "text"),
        (2, "tool_use"),
        (3, "tool_use"),
        (4, "tool_result"),
        (5, "tool_result"),
        (6, "text"),
    ]
    uses = [e for e in events if e.get("block") == "tool_use"]
    assert [(u["name"], u["arguments"]) for u in uses] == [
        ("read", {"path": "README.md"}),
        ("list", {}),
    ]
    results = [e for e in events if e.get("block") == "tool_result"]
    assert [r["id"] for r in results] == [u["id"] for u in uses]
    assert "# Wire test" in results[0]["content"] and results[0]["ok"]
    text = "".join(e["text"] for e in events if e["type"] == "block_delta" and e["index"] == 6)
    assert text == "It is a wire test ✓."
    end = events[-1]
    assert end["type"] == "turn_end" and end["stop"] == "end_turn" and end["rounds"] == 2
    assert end["usage"]["input"] > 0 and end["usage"]["output"] > 0
    second = json.dumps(server.requests[1].body)
    assert "Wire test" in second  # the tool result went back to the model


def session_for(fmt, server, workspace, **options):
    return new_session(
        provider=fmt,
        base_url=server.base_url(fmt),
        api_key=SECRET,
        workspace=workspace,
        mode="plan",
        **FAST,
        **options,
    )


def consistent(messages):
    """Every tool call answered, right after its assistant message."""
    ids = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return ids == answered


def partial(fmt):
    """A reply and the position just after its first piece of text went out."""
    r = reply(fmt, Round(text="partial answer that goes on"))
    return r, r.index("answer")


FAULTS = {
    "reset mid-stream": lambda fmt: (lambda r, n: r.reset_after(n))(*partial(fmt)),
    "no terminal event": lambda fmt: (lambda r, n: r.close_after(n))(*partial(fmt)),
    "stall past the read timeout": lambda fmt: (lambda r, n: r.stall_after(n))(*partial(fmt)),
    "malformed line": lambda fmt: (
        lambda r, n: r.insert(n, "{not json\n" if fmt == "ollama" else "data: {not json\n\n")
    )(*partial(fmt)),
    "error event after 200": lambda fmt: (lambda r, n: r.insert(n, error_event(fmt)))(
        *partial(fmt)
    ),
    "401": lambda fmt: error_reply(fmt, 401, "invalid x-api-key"),
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_after_a_fault_the_session_is_usable_and_consistent(fmt, fault, server, workspace):
    server.queue(FAULTS[fault](fmt))
    server.script(fmt, Round(calls=[("read", {"path": "README.md"})]), Round(text="Recovered."))
    session = session_for(fmt, server, workspace)
    first = asyncio.run(session.turn("first question"))
    assert first.stop == "error" and first.error
    assert SECRET not in first.error and SECRET not in json.dumps(first.record)
    if fault != "401":
        assert first.reply.startswith("partial")  # what streamed before the fault is kept
    second = asyncio.run(session.turn("second question"))
    assert second.stop == "end_turn" and second.reply == "Recovered."
    body = json.dumps(server.requests[-2].body)
    assert "first question" in body and "second question" in body


@pytest.mark.parametrize("fmt", FORMATS)
def test_retry_after_429_and_500_is_invisible_to_the_turn(fmt, server, workspace):
    server.queue(error_reply(fmt, 429, retry_after=0), error_reply(fmt, 500))
    server.script(fmt, Round(text="Fine."))
    session = session_for(fmt, server, workspace)
    result = asyncio.run(session.turn("hi"))
    assert (result.reply, result.stop) == ("Fine.", "end_turn")
    assert len(server.requests) == 3
