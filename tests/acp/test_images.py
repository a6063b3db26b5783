"""Images in `session/prompt` (issue 37 item 10), over real ACP: `elelem-kernel acp` in its
own process, the Python SDK's client, the model a loopback server that records what each
provider format received."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("acp")

from acp import RequestError, image_block, text_block  # noqa: E402

from tests.acp.test_agent import Recorder, agent, run, start  # noqa: E402
from tests.pictures import png64  # noqa: E402
from tests.wire_servers import Round, WireServer  # noqa: E402

SHOT = png64(40, 30)
LABEL = "[image 1: 40×30 PNG, shot.png]"


def asked(text: str = "What does this plot show?") -> list:
    return [text_block(text), image_block(SHOT, "image/png", uri="file:///tmp/shot.png")]


def test_an_image_reaches_the_model_is_stored_once_and_survives_load(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script("anthropic", Round(text="A rising line."), Round(text="Still a line."))
        env = {**home, **wire.env("anthropic")}
        first, second = Recorder(), Recorder()

        async def main():
            async with agent(first, env, tmp_path) as conn:
                init, new = await start(conn, ws)
                answer = await conn.prompt(session_id=new.session_id, prompt=asked())
            async with agent(second, env, tmp_path) as conn:
                await conn.initialize(protocol_version=1)
                await conn.load_session(cwd=str(ws), session_id=new.session_id, mcp_servers=[])
                replayed = list(second.updates)
                later = await conn.prompt(
                    session_id=new.session_id, prompt=[text_block("And now?")]
                )
            return init, new, answer, replayed, later

        init, new, answer, replayed, later = run(main())
        sent = [q.body["messages"] for q in wire.requests]
    assert init.agent_capabilities.prompt_capabilities.image is True
    assert answer.stop_reason == later.stop_reason == "end_turn"
    assert first.text() == "A rising line."

    text, image = sent[0][-1]["content"][:2]
    assert text["text"] == f"What does this plot show?\n{LABEL}"
    assert image["type"] == "image"
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": SHOT}

    saved = (tmp_path / "sessions" / f"{new.session_id}.ipynb").read_text()
    assert saved.count(SHOT) == 1  # once: in the output's HTML, not in the record
    output = json.loads(saved)["cells"][0]["outputs"][0]
    assert f'src="data:image/png;base64,{SHOT}"' in "".join(output["data"]["text/html"])
    record = output["metadata"]["elelem"]
    assert record["prompt"] == f"What does this plot show?\n{LABEL}"
    assert record["prompt_images"] == [
        {"mime_type": "image/png", "width": 40, "height": 30, "in": "text/html"}
    ]

    [user] = [u for u in replayed if u.session_update == "user_message_chunk"]
    assert LABEL in user.content.text
    history = json.dumps(sent[1], ensure_ascii=False)
    assert SHOT not in history and '"type": "image"' not in history
    assert "[image from turn 1: 40×30 PNG, omitted]" in history


@pytest.mark.parametrize(
    ("fmt", "model", "where"),
    [
        ("openai", "gpt-4o", lambda m: m["content"][1]["image_url"]["url"]),
        ("ollama", "llava", lambda m: m["images"][0]),
    ],
)
def test_other_formats_receive_the_image_as_they_take_images(tmp_path, home, ws, fmt, model, where):
    with WireServer() as wire:
        wire.script(fmt, Round(text="A line."))
        env = {**home, **wire.env(fmt)}

        async def main():
            async with agent(Recorder(), env, tmp_path, "-p", fmt, "--model", model) as conn:
                _, new = await start(conn, ws)
                return await conn.prompt(session_id=new.session_id, prompt=asked())

        answer = run(main())
        [request] = wire.requests
    assert answer.stop_reason == "end_turn"
    prompt = request.body["messages"][-1]
    assert where(prompt).endswith(SHOT)
    text = prompt["content"] if fmt == "ollama" else prompt["content"][0]["text"]
    assert text.endswith(LABEL)


def test_bad_images_are_refused_whole_and_the_session_goes_on(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script("anthropic", Round(text="Fine."))
        client = Recorder()
        many = [text_block("all of them"), *[image_block(SHOT, "image/png")] * 9]

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws)
                sid = new.session_id
                errors = []
                for prompt in (
                    [text_block("a bitmap"), image_block(SHOT, "image/bmp")],
                    [text_block("broken"), image_block("%%not base64%%", "image/png")],
                    many,
                ):
                    with pytest.raises(RequestError) as refused:
                        await conn.prompt(session_id=sid, prompt=prompt)
                    errors.append(refused.value)
                answer = await conn.prompt(session_id=sid, prompt=[text_block("plain text")])
                return sid, errors, answer

        sid, errors, answer = run(main())
        requests = list(wire.requests)
    assert [e.code for e in errors] == [-32602] * 3
    assert "image 1: image/bmp: not a PNG, JPEG, GIF or WebP image" in str(errors[0])
    assert "image 1: image/png: the data is not valid base64" in str(errors[1])
    assert "has 9 images; a prompt takes at most 8" in str(errors[2])
    assert answer.stop_reason == "end_turn" and client.text() == "Fine."
    assert len(requests) == 1  # the refused prompts never reached the model
    cells = json.loads((tmp_path / "sessions" / f"{sid}.ipynb").read_text())["cells"]
    assert [c["source"] for c in cells] in (["plain text"], [["plain text"]])


def test_a_model_without_vision_refuses_images_and_says_how_to_switch(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script("openai", Round(text="Text only."))
        env = {**home, **wire.env("openai")}

        async def main():
            async with agent(
                Recorder(), env, tmp_path, "-p", "openai", "--model", "gpt-3.5-turbo"
            ) as conn:
                _, new = await start(conn, ws)
                with pytest.raises(RequestError) as refused:
                    await conn.prompt(session_id=new.session_id, prompt=asked())
                answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
                return refused.value, answer

        refused, answer = run(main())
        requests = list(wire.requests)
    assert refused.code == -32602
    assert "gpt-3.5-turbo takes no images, so the prompt was not sent" in str(refused)
    assert answer.stop_reason == "end_turn" and len(requests) == 1
    assert "image" not in json.dumps(requests[0].body["messages"][-1])


def test_the_demo_model_says_what_it_received(tmp_path, home, ws):
    client = Recorder()

    async def main():
        async with agent(client, home, tmp_path, "-p", "demo") as conn:
            _, new = await start(conn, ws)
            return await conn.prompt(session_id=new.session_id, prompt=asked("What is this?"))

    answer = run(main())
    assert answer.stop_reason == "end_turn"
    said = client.text()
    assert said.startswith("I received an image from you: 40×30 PNG (")
    assert "cannot tell what it shows" in said


def test_the_typescript_sdks_client_sends_an_image_and_gets_valid_answers(tmp_path, home, ws):
    from tests.acp.test_agent import AGENT
    from tests.acp.test_ts_client import SDK, check_every_message, need_sdk, validator

    need_sdk()
    image = {"type": "image", "data": SHOT, "mimeType": "image/png", "uri": "file:///tmp/shot.png"}
    prompts = [
        [{"type": "text", "text": "What does this plot show?"}, image],
        [{"type": "text", "text": "and this?"}, {**image, "mimeType": "image/svg+xml"}],
    ]
    for prompt in prompts:  # what the client sends is ACP as the SDK's schema has it
        validator("PromptRequest").validate({"sessionId": "s", "prompt": prompt})
    with WireServer() as wire:
        wire.script("anthropic", Round(text="A rising line."))
        out = subprocess.run(
            [
                "node",
                str(Path(__file__).with_name("ts_prompts.mjs")),
                str(SDK),
                AGENT,
                str(ws),
                str(tmp_path),
            ],
            env={**home, **wire.env("anthropic")},
            input=json.dumps(prompts),
            capture_output=True,
            text=True,
            timeout=300,
        )
        requests = list(wire.requests)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    received = tmp_path / "received-prompts.jsonl"
    lines = received.read_text().splitlines()
    refusals = [line for line in lines if '"error"' in line and '"method"' not in line]
    [refusal] = refusals
    validator("Error").validate(json.loads(refusal)["error"])
    received.write_text("".join(f"{line}\n" for line in lines if line not in refusals))
    check_every_message(received)  # every other line: updates and results
    assert seen["initialize"]["agentCapabilities"]["promptCapabilities"]["image"] is True
    first, second = seen["answers"]
    assert first["result"]["stopReason"] == "end_turn"
    assert second["error"]["code"] == -32602
    assert "image/svg+xml: not a PNG, JPEG, GIF or WebP image" in json.dumps(second["error"])
    [request] = requests
    assert request.body["messages"][-1]["content"][1]["source"]["data"] == SHOT
