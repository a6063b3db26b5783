"""Fixtures for provider tests: a loopback wire server and providers pointed at it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from elelem_kernel.providers.anthropic import AnthropicProvider
from elelem_kernel.providers.http import HTTPProvider
from elelem_kernel.providers.ollama import OllamaProvider
from elelem_kernel.providers.openai import OpenAIProvider
from elelem_kernel.providers.responses import ResponsesProvider
from tests.wire_servers import WireServer

CLASSES: dict[str, type[HTTPProvider]] = {
    "anthropic": AnthropicProvider,
    "openai": OpenAIProvider,
    "responses": ResponsesProvider,
    "ollama": OllamaProvider,
}
KEY = "sk-test-0123456789secret"
PROMPT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]
ENV_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OLLAMA_HOST",
    "OLLAMA_API_KEY",
    "ELELEM_MODEL",
)


@dataclass
class Fetched:
    """What one `fetch` did: the events it emitted and the error it raised, if any."""

    events: list[dict] = field(default_factory=list)
    error: BaseException | None = None

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["type"] == kind]

    @property
    def text(self) -> str:
        return "".join(e["text"] for e in self.of("saying"))

    @property
    def thinking(self) -> str:
        return "".join(e["text"] for e in self.of("thinking"))

    @property
    def calls(self) -> list[tuple[str, dict]]:
        return [(e["name"], e["arguments"]) for e in self.of("doing")]

    def joined(self) -> list[dict]:
        """The events with consecutive text pieces of one kind joined (pieces without
        metadata): what a stream says, whatever the network reads it arrived in."""
        out: list[dict] = []
        for e in self.events:
            piece = e["type"] in ("saying", "thinking") and "metadata" not in e
            last = out[-1] if out else None
            if piece and last and last["type"] == e["type"] and "metadata" not in last:
                out[-1] = {**last, "text": last["text"] + e["text"]}
            else:
                out.append(e)
        return out

    def begins(self, whole: Fetched) -> bool:
        """Whether these events are the start of `whole`'s, both `joined`: the last text
        piece may stop inside the one it is the start of (a stream cut short)."""
        mine, theirs = self.joined(), whole.joined()
        if not mine or len(mine) > len(theirs):
            return False
        *head, last = mine
        if head != theirs[: len(head)]:
            return False
        other = theirs[len(head)]
        if last == other:
            return True
        piece = last["type"] in ("saying", "thinking") and "metadata" not in last
        return (
            piece
            and other == {**last, "text": other["text"]}
            and (other["text"].startswith(last["text"]))
        )

    def assistant(self) -> dict:
        """The neutral assistant message the session builds from these events (DESIGN):
        thinking pieces join; a piece with metadata closes its entry."""
        thinking: list[dict] = []
        current: dict | None = None
        for e in self.of("thinking"):
            if current is None:
                current = {"text": ""}
                thinking.append(current)
            current["text"] += e["text"]
            if e.get("metadata"):
                current["metadata"] = e["metadata"]
                current = None
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        calls = [
            {k: e[k] for k in ("id", "name", "arguments", "metadata") if k in e}
            for e in self.of("doing")
        ]
        if calls:
            message["tool_calls"] = calls
        if thinking:
            message["thinking"] = thinking
        return message


def results(message: dict, *contents: str) -> list[dict]:
    """Tool messages answering each call of `message`, in order."""
    return [
        {"role": "tool", "tool_call_id": call["id"], "content": content}
        for call, content in zip(message["tool_calls"], contents, strict=True)
    ]


def fetch(provider: Any, messages: list[dict] = PROMPT, tools: list[dict] = TOOLS) -> Fetched:
    """Run one `provider.fetch` on a fresh event loop, like a Jupyter turn does."""
    result = Fetched()

    async def go() -> None:
        try:
            await provider.fetch(messages, tools, result.events.append)
        except Exception as e:
            result.error = e
        finally:
            await provider.aclose()

    asyncio.run(go())
    return result


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, base URL or model from the machine leaks into a test."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A started loopback wire server."""
    with WireServer() as server:
        yield server


@pytest.fixture
def make(wire: WireServer) -> Callable[..., HTTPProvider]:
    """`make(fmt, **options)`: a provider of format `fmt` talking to the wire server."""

    def build(fmt: str, **options: Any) -> HTTPProvider:
        settings = {"base_url": wire.base_url(fmt), "api_key": KEY, "backoff": 0.001}
        settings.update(options)
        return CLASSES[fmt](**settings)

    return build
