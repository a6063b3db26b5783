"""`elelem-kernel acp` driven by the official TypeScript SDK's client (ts_client.mjs).

The SDK (`@agentclientprotocol/sdk`, pinned in `.cache/acp-npm`, installed by
`scripts/setup.sh test`) is a client no one here wrote; every line the agent sends it is
validated against the JSON schema that SDK ships. Without node it skips, unless CI or
ELELEM_REQUIRE_BROWSER is set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("acp")
jsonschema = pytest.importorskip("jsonschema")

from tests.acp.test_agent import AGENT  # noqa: E402
from tests.wire_servers import Round, WireServer, reply  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SDK = REPO / ".cache" / "acp-npm" / "node_modules" / "@agentclientprotocol" / "sdk"
CLIENT = Path(__file__).with_name("ts_client.mjs")
#: The schema definition of each answer, by the method of the request it answers.
ANSWERS = {
    "initialize": "InitializeResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/prompt": "PromptResponse",
}


def need_sdk() -> None:
    if SDK.is_dir() and shutil.which("node"):
        return
    why = "the ACP TypeScript SDK is not installed: run `bash scripts/setup.sh test` (node, npm)"
    if os.environ.get("ELELEM_REQUIRE_BROWSER") or os.environ.get("CI"):
        pytest.fail(why + " (required here: CI or ELELEM_REQUIRE_BROWSER is set)")
    pytest.skip(why)


def validator(definition: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SDK / "schema" / "v1" / "schema.json").read_text())
    return jsonschema.Draft202012Validator(
        {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    )


def check_every_message(path: Path) -> list[dict]:
    """Each line the agent sent, validated against the SDK's schema; the messages."""
    params = {
        "session/update": validator("SessionNotification"),
        "session/request_permission": validator("RequestPermissionRequest"),
    }
    messages = [json.loads(line) for line in path.read_text().splitlines()]
    for message in messages:
        assert message["jsonrpc"] == "2.0"
        if "method" in message:
            params[message["method"]].validate(message["params"])
        else:
            assert "result" in message and "error" not in message, message
    return messages


def test_the_typescript_sdks_client_runs_a_whole_session(tmp_path, home, ws):
    need_sdk()
    with WireServer() as wire:
        slow = reply("anthropic", Round(text="a long answer " * 20))
        wire.script(
            "anthropic",
            Round(calls=[("write", {"path": "a.txt", "content": "a\n"})]),
            Round(text="Wrote it."),
        )
        wire.queue(slow.stall_after(slow.index("answer") + 1))
        wire.script("anthropic", Round(text="After the cancel."), Round(text="Loaded."))
        env = {**home, **wire.env("anthropic")}
        out = subprocess.run(
            ["node", str(CLIENT), str(SDK), AGENT, str(ws), str(tmp_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    for phase in (1, 2):
        check_every_message(tmp_path / f"received-{phase}.jsonl")
    for name, answer in (
        ("initialize", seen["initialize"]),
        ("session/load", seen["load"]),
        ("session/prompt", seen["first"]),
        ("session/prompt", seen["cancelled"]),
        ("session/prompt", seen["next"]),
        ("session/prompt", seen["afterLoad"]),
    ):
        validator(ANSWERS[name]).validate(answer)

    assert seen["first"]["stopReason"] == "end_turn" and (ws / "a.txt").read_text() == "a\n"
    assert seen["cancelled"]["stopReason"] == "cancelled"
    assert seen["next"]["stopReason"] == seen["afterLoad"]["stopReason"] == "end_turn"
    first = seen["phase1"]
    [asked] = first["asked"]
    order = first["order"]
    announced = order.index(["update", "tool_call", asked])
    assert announced < order.index(["ask", asked])
    live = [u["toolCallId"] for u in first["updates"] if u["sessionUpdate"] == "tool_call"]
    replayed = [
        u["toolCallId"] for u in seen["phase2"]["updates"] if u["sessionUpdate"] == "tool_call"
    ]
    assert len(live) == len(replayed) == 1 and live != replayed
    texts = "".join(
        u["content"]["text"]
        for u in seen["phase2"]["updates"]
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert texts.endswith("Loaded.") and "After the cancel." in texts
