"""A round cut off at max_tokens in the middle of its tool calls, over real HTTP.

The calls that arrived show as cards that say they were not run and why; the call the
model was cut off in shows what arrived; the cell, the terminal and `--json` say how to
raise the limit (issue 18, item 7).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.render.static import bundle
from tests.wire_servers import WireServer, sse, stream_reply


def cut_off_reply():
    """OpenAI chunks: text, one whole call, one call cut mid-arguments, finish `length`."""

    def chunk(delta, finish=None):
        return sse({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def call(index, **fn):
        head = {"index": index, "function": fn}
        if "name" in fn:
            head.update(id=f"call_{index}", type="function")
        return chunk({"tool_calls": [head]})

    return stream_reply(
        "openai",
        [
            chunk({"role": "assistant", "content": "I will write two files."}),
            call(0, name="write", arguments='{"path": "a.txt", "content": "A"}'),
            call(1, name="write", arguments='{"path": "b.txt", "conte'),
            chunk({}, "length"),
            sse({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 8}}),
            b"data: [DONE]\n\n",
        ],
    )


@pytest.fixture
def server():
    with WireServer() as s:
        yield s


def test_a_session_shows_the_calls_as_not_run_and_the_partial_one_with_what_arrived(
    server, tmp_path
):
    server.queue(cut_off_reply())
    session = new_session(
        provider="openai",
        base_url=server.base_url("openai"),
        api_key="k",
        mode="auto",
        workspace=tmp_path,
    )
    events = []
    result = asyncio.run(session.turn("write two files", renderer=events.append))
    assert result.stop == "max_tokens"
    calls = result.record["rounds"][0]["calls"]
    assert [c["name"] for c in calls] == ["write", "write"]
    assert calls[0]["arguments"] == {"path": "a.txt", "content": "A"}
    assert calls[1]["arguments"] == {"partial (cut off)": '{"path": "b.txt", "conte'}
    for c in calls:
        assert c["ok"] is False and "not run: the reply was cut off at max_tokens" in c["result"]
    assert not (tmp_path / "a.txt").exists()  # not run, even in auto mode
    results = [e for e in events if e.get("block") == "tool_result"]
    assert len(results) == 2 and all(not e["ok"] for e in results)
    starts = [e for e in events if e["type"] == "block_start"]
    stops = [e for e in events if e["type"] == "block_stop"]
    assert sorted(e["index"] for e in starts) == sorted(e["index"] for e in stops)
    data, _ = bundle(result.record)
    for kind in ("text/plain", "text/markdown"):
        assert "-o max_tokens=N" in data[kind] and "not run" in data[kind]


def test_the_command_line_and_json_say_so(server, tmp_path):
    server.queue(cut_off_reply(), cut_off_reply())
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(server.env("openai"), HOME=str(tmp_path))
    base = [sys.executable, "-m", "elelem_kernel.cli", "ask", "-p", "openai", "--mode", "auto"]
    run = dict(cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, input="")
    out = subprocess.run([*base, "write two files"], **run)
    assert out.returncode == 0, out.stderr
    assert "cut off at max_tokens: raise the limit with -o max_tokens=N" in out.stderr
    out = subprocess.run([*base, "--json", "write two files"], **run)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    results = [e for e in lines if e.get("block") == "tool_result"]
    assert len(results) == 2 and all("not run" in e["content"] for e in results)
    assert lines[-1]["type"] == "turn_end" and lines[-1]["stop"] == "max_tokens"
