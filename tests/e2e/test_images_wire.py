"""Images reach the model over real HTTP, in each provider's own wire form: a turn that
reads an image file, the exact request after the call, and the placeholder a later turn
sends instead of the image."""

from __future__ import annotations

import json

import pytest

from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.errors import ConfigError
from tests.pictures import png, png64
from tests.wire_servers import FORMATS, Reply, Round, WireServer

MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4.1",
    "responses": "gpt-5",
    "ollama": "my-own-model",  # takes images because /api/show says so
}
DATA = png64(64, 48)
URL = f"data:image/png;base64,{DATA}"
PLACEHOLDER = "[image from turn 1: 64×48 PNG, omitted]"


@pytest.fixture
def server():
    with WireServer() as s:
        yield s


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "plot.png").write_bytes(png(64, 48))
    return tmp_path


def session_for(fmt: str, server: WireServer, workspace, model: str | None = None, **options):
    return new_session(
        fmt,
        model or MODELS[fmt],
        mode="plan",
        workspace=workspace,
        history="full",
        base_url=server.base_url(fmt),
        api_key="k",
        retries=0,
        **options,
    )


def show(capabilities: list[str]) -> Reply:
    """Ollama's `/api/show` answer naming the model's capabilities."""
    body = json.dumps({"capabilities": capabilities}).encode()
    return Reply(200, {"content-type": "application/json"}, [body], stream=False)


def tool_part(fmt: str, body: dict) -> object:
    """Where the tool result sits in a request body, per format."""
    if fmt == "anthropic":
        return body["messages"][-1]["content"]
    if fmt == "responses":
        return [i for i in body["input"] if i.get("type") == "function_call_output"]
    return body["messages"][-2:] if fmt == "openai" else body["messages"][-1]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_image_read_reaches_the_model_then_is_a_placeholder(fmt, server, workspace):
    server.script(fmt, Round(calls=[("read", {"path": "plot.png"})]))
    if fmt == "ollama":  # my-own-model takes images because /api/show says so
        server.info["/api/show"] = show(["completion", "vision"])
    server.script(fmt, Round(text="A red square."), Round(text="Still red."))
    session = session_for(fmt, server, workspace)
    first = session.run("what is in plot.png?")
    assert first.error is None and first.reply == "A red square."
    second = session.run("and now?")
    assert second.error is None
    requests = server.requests  # what the model was asked (model-info requests are apart)
    assert len(requests) == 3
    after_call, later = requests[1].body, requests[2].body
    part = tool_part(fmt, after_call)
    if fmt == "anthropic":
        [result] = part
        assert result["type"] == "tool_result" and "is_error" not in result
        text, image = result["content"]
        assert json.loads(text["text"])["images_attached"] == ["image 1: 64×48 PNG"]
        assert image == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": DATA},
        }
    elif fmt == "openai":
        tool, follow = part
        assert tool["role"] == "tool" and "images_attached" in tool["content"]
        call = tool["tool_call_id"]
        assert follow == {
            "role": "user",
            "content": [
                {"type": "text", "text": f"Image from tool call {call}:"},
                {"type": "image_url", "image_url": {"url": URL}},
            ],
        }
    elif fmt == "responses":
        [output] = part
        text, image = output["output"]
        assert text["type"] == "input_text" and "images_attached" in text["text"]
        assert image == {"type": "input_image", "image_url": URL}
    else:
        assert part["role"] == "tool" and part["images"] == [DATA]
    raw = json.dumps(later, ensure_ascii=False)
    assert DATA not in raw and PLACEHOLDER in raw


@pytest.mark.parametrize("fmt", ["openai", "ollama"])
def test_a_model_without_vision_gets_the_description_never_the_image(fmt, server, workspace):
    server.script(fmt, Round(calls=[("read", {"path": "plot.png"})]))
    if fmt == "ollama":
        server.info["/api/show"] = show(["completion", "tools"])
    server.script(fmt, Round(text="Can't see."))
    # qwen3 is known not to take images; for llava Ollama's own answer wins
    session = session_for(fmt, server, workspace, model="llava" if fmt == "ollama" else "qwen3")
    assert session.run("look").error is None
    body = server.requests[1].body
    raw = json.dumps(body, ensure_ascii=False)
    assert DATA not in raw
    assert "[image: 64×48 PNG, omitted] (the model takes no images)" in raw
    assert body["messages"][-1]["role"] == "tool"


def test_the_vision_option_overrides_what_is_known(server, workspace):
    server.script("openai", Round(calls=[("read", {"path": "plot.png"})]), Round(text="No."))
    session = session_for("openai", server, workspace, vision="off")
    assert session.run("look").error is None
    assert DATA not in json.dumps(server.requests[1].body)
    server.clear()
    server.requests.clear()
    server.script("openai", Round(calls=[("read", {"path": "plot.png"})]), Round(text="Yes."))
    session.facts.set_option("vision", "on")
    session.facts.model = "my-local-model"
    assert session.run("look again").error is None
    assert server.requests[1].body["messages"][-1]["content"][1]["image_url"]["url"] == URL


def test_the_max_images_option_bounds_a_request(server, workspace):
    server.script(
        "openai",
        Round(calls=[("read", {"path": "plot.png"}), ("read", {"path": "plot.png"})]),
        Round(text="Two."),
    )
    session = session_for("openai", server, workspace, max_images=1)
    assert session.run("look twice").error is None
    body = server.requests[1].body
    raw = json.dumps(body, ensure_ascii=False)
    assert raw.count(DATA) == 1 and "(over 1 in a request)" in raw
    with pytest.raises(ConfigError, match="max_images must be a whole number"):
        session.facts.set_option("max_images", "lots")
