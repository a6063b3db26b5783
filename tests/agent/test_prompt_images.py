"""A prompt's own images (`Session.turn(..., images=...)`, an ACP client's screenshot):
sent with the prompt in their turn, kept whole in the record, stored once in the output,
a placeholder in later turns' history, and kept through a compaction's rebuilt request."""

from __future__ import annotations

import asyncio
from typing import Any

from elelem_kernel.agent.session import Session
from elelem_kernel.render.static import bundle
from tests.pictures import entry
from tests.scripted import Scripted, say


class Seeing:
    """A provider that takes images and keeps each request's messages."""

    name = "seeing"

    def __init__(self, model: str | None = None, **options: Any) -> None:
        self.model = model or "seeing"
        self.sent: list[list[dict[str, Any]]] = []

    def takes_images(self) -> bool:
        return True

    async def fetch(self, messages, tools, emit) -> None:
        self.sent.append([dict(m) for m in messages])
        emit({"type": "saying", "text": "A red square."})
        emit({"type": "stop", "reason": "end_turn"})


def turn(session: Session, prompt: str, images: list[dict[str, Any]] | None = None):
    return asyncio.run(session.turn(prompt, images=images))


def test_the_prompts_images_go_with_it_and_are_stored_once():
    provider = Seeing()
    session = Session(provider, provider_name="seeing")
    shot = entry(20, 10)
    first = turn(session, "What is this?\n[image 1: 20×10 PNG]", [shot])
    assert first.stop == "end_turn"
    asked = provider.sent[0][-1]
    assert asked["role"] == "user" and asked["images"] == [shot]
    assert first.record["prompt_images"] == [shot]

    data, metadata = bundle(first.record)
    stored = next(iter(metadata.values()))
    assert stored["prompt_images"] == [
        {"mime_type": "image/png", "width": 20, "height": 10, "in": "text/html"}
    ]
    assert data["text/html"].count(shot["data"]) == 1
    assert 'alt="image sent with the prompt"' in data["text/html"]

    turn(session, "And now?")
    history = provider.sent[1]
    assert not any(m.get("images") for m in history)
    earlier = [m for m in history if m["role"] == "user"][0]["content"]
    assert earlier == "What is this?\n[image 1: 20×10 PNG]\n[image from turn 1: 20×10 PNG, omitted]"


def test_large_prompt_images_are_not_cut_to_fit_the_record():
    provider = Seeing()
    session = Session(provider, provider_name="seeing")
    big = [{**entry(), "data": "A" * 1_300_000} for _ in range(4)]  # past the record's bound
    result = turn(session, "four", big)
    assert [len(i["data"]) for i in result.record["prompt_images"]] == [1_300_000] * 4


def test_a_session_of_a_model_without_vision_gets_placeholders_not_images():
    class Blind(Seeing):
        def takes_images(self) -> bool:
            return False

    provider = Blind()
    session = Session(provider, provider_name="blind")
    turn(session, "look", [entry()])
    asked = provider.sent[0][-1]
    assert "images" not in asked
    assert asked["content"] == "look\n[image: 4×3 PNG, omitted] (the model takes no images)"


def test_a_compaction_before_the_turn_keeps_its_prompts_images(tmp_path, monkeypatch, home):
    monkeypatch.chdir(tmp_path)
    provider = Scripted(say("one"), say("SUMMARY"), say("two"))
    session = Session(provider, provider_name="scripted")
    session.facts.provider_options["scripted"] = {"vision": "on"}
    turn(session, "first " + "x" * 3_500)
    session.command("/compact")
    result = turn(session, "look\n[image 1: 4×3 PNG]", [entry()])
    assert result.record["compaction"]["turns"] == 1
    asked = provider.sent[2]["messages"][-1]
    assert asked["content"] == "look\n[image 1: 4×3 PNG]" and asked["images"] == [entry()]
