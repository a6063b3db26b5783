"""The site policy in the ACP agent: the real `elelem-kernel acp` process driven by the
SDK's client side, the model the loopback Anthropic wire server."""

from __future__ import annotations

import json
import os
import stat

import pytest

pytest.importorskip("acp")

from acp import RequestError, text_block  # noqa: E402
from acp.schema import McpServerStdio  # noqa: E402

from tests.acp.test_agent import Recorder, agent, run, start  # noqa: E402
from tests.wire_servers import Round, WireServer  # noqa: E402

WORDS = "Ask it-help@example.com for more."
USAGE = {"input": 100_000, "output": 10_000}
POLICY = {
    "providers": {"allow": ["anthropic"]},
    "models": {"block": ["*-preview"]},
    "default": {"model": "claude-sonnet-4-5"},
    "options": {"anthropic": {"max_tokens": 1000}},
    "modes": {"allow": ["plan", "build", "verify"]},
    "tools": {"deny": ["bash"], "ask": ["write"]},
    "mcp": {"allow": ["notes"]},
    "budget": {"day": "111k tokens", "session": "300k tokens"},
    "message": WORDS,
}


def test_the_acp_agent_keeps_the_site_policy(tmp_path, home, ws):
    site = tmp_path / "elelem_policy.json"
    site.write_text(json.dumps(POLICY))
    source = f"the site policy ({site}, set by your administrator)"
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(
                calls=[("bash", {"command": "touch ran"}), ("write", {"path": "a", "content": "x"})]
            ),
            Round(calls=[("write", {"path": "b", "content": "y"})]),
            Round(text="Done."),
            Round(text="Big.", usage=USAGE),
        )
        env = {**home, **wire.env("anthropic"), "ELELEM_POLICY": str(site)}
        env.update({k: v for k, v in os.environ.items() if k == "PYTHONPATH"})
        client = Recorder(answers=["allow", "allow"])
        web = McpServerStdio(name="web", command="npx", args=["x"], env=[])

        async def main():
            async with agent(client, env, tmp_path) as conn:
                _, new = await start(conn, ws, mcp_servers=[web])
                sid = new.session_id
                refusals = []
                for call in (
                    conn.set_session_mode(mode_id="auto", session_id=sid),
                    conn.set_config_option(config_id="mode", session_id=sid, value="auto"),
                    conn.set_config_option(config_id="provider", session_id=sid, value="demo"),
                ):
                    with pytest.raises(RequestError) as refused:
                        await call
                    refusals.append(str(refused.value.data or refused.value))
                said = {}
                for line in ("/policy", "/model claude-x-preview", "/mcp", "/budget 400k tokens"):
                    client.updates.clear()
                    await conn.prompt(session_id=sid, prompt=[text_block(line)])
                    said[line] = client.text()
                client.updates.clear()
                turns = [
                    await conn.prompt(session_id=sid, prompt=[text_block(p)]) for p in ("go", "big")
                ]
                client.updates.clear()
                stopped = await conn.prompt(session_id=sid, prompt=[text_block("again")])
                return new, refusals, said, turns, stopped, client.text()

        new, refusals, said, turns, stopped, stop_text = run(main())
        requests = [q.body for q in wire.requests]
    assert [m.id for m in new.modes.available_modes] == ["plan", "build", "verify"]
    mode, provider = new.config_options
    assert [o.value for o in mode.options] == ["plan", "build", "verify"]
    assert [o.value for o in provider.options] == ["anthropic"]  # only what is allowed
    assert all(f"mode auto is not allowed by {source}" in r for r in refusals[:2]), refusals
    assert (
        f'provider "demo" is not allowed by {source}; it allows providers: anthropic. {WORDS}'
        in refusals[2]
    )
    assert str(site) in said["/policy"] and '"deny": ["bash"]' in said["/policy"]
    assert f'model "claude-x-preview" is not allowed by {source}' in said["/model claude-x-preview"]
    assert f'MCP server "web" is not allowed by {source}' in said["/mcp"]
    assert f"more than {source} allows (300k tokens)" in said["/budget 400k tokens"]

    assert [t.stop_reason for t in turns] == ["end_turn", "end_turn"]
    first = requests[0]
    assert first["model"] == "claude-sonnet-4-5" and first["max_tokens"] == 1000
    assert "bash" not in [t["name"] for t in first["tools"]]
    assert [call.title for call, _ in client.asked] == ["write a", "write b"]  # asked each time
    assert all("allow_always" not in [o.kind for o in options] for _, options in client.asked)
    assert not (ws / "ran").exists() and (ws / "a").read_text() == "x"

    [saved] = (tmp_path / "sessions").glob("*.ipynb")  # the conversation: this person's alone
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
    assert len(requests) == 4  # the day's budget stopped the last prompt before a request
    assert "budget: today spent 110k tokens of 111k tokens" in stop_text
    assert f"This limit (111k tokens per day) is set by {source}." in stop_text
