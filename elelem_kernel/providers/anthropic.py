"""Anthropic Messages API over SSE: thinking with signatures, redacted thinking, tool use
streamed as JSON fragments, and prompt-caching breakpoints on the stable prefix.

Thinking blocks come back to the session as `thinking` events; the event that ends a
block carries `metadata={"anthropic": {"signature": ..., "thinking": <exact text>}}` (or
`{"redacted": data}` for a redacted block), and the next request of the turn echoes those
blocks byte for byte, first in the assistant message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from elelem_kernel.errors import ConfigError
from elelem_kernel.events import (
    AssistantMessage,
    Emit,
    Message,
    Reported,
    ToolMessage,
    UserMessage,
)
from elelem_kernel.providers import sampling
from elelem_kernel.providers.http import HTTPProvider, StreamParser, parse_arguments, switch
from elelem_kernel.providers.wire_json import Event, Tools, count, function, mapping, text

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired

RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
THINKING_LEVELS = {"low": 2048, "medium": 8192, "high": 16000}
#: The sampling options the Messages API takes (`providers/sampling.py`).
SAMPLING = ("temperature", "top_p", "top_k", "stop")


class CacheControl(TypedDict):
    """A prompt-caching breakpoint: everything up to the block carrying it is cached."""

    type: Literal["ephemeral"]


CACHE: CacheControl = {"type": "ephemeral"}


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str
    cache_control: NotRequired[CacheControl]


class ImageSource(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


class ImageBlock(TypedDict):
    type: Literal["image"]
    source: ImageSource
    cache_control: NotRequired[CacheControl]


class ToolResultBlock(TypedDict):
    """A tool's result, in the user message after the call: its text, or text and images."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[TextBlock | ImageBlock]
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl]


class ToolUseBlock(TypedDict):
    """A tool call the assistant made, sent back with the arguments it streamed."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: Mapping[str, object]
    cache_control: NotRequired[CacheControl]


class SignedThinking(TypedDict):
    """A thinking block echoed byte for byte with its signature (no cache breakpoint)."""

    type: Literal["thinking"]
    thinking: str
    signature: str


class RedactedThinking(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


#: A block that may carry a cache breakpoint (thinking blocks may not).
Cacheable = TextBlock | ImageBlock | ToolResultBlock | ToolUseBlock
Block = Cacheable | SignedThinking | RedactedThinking


class WireMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: list[Block]


class ToolDeclaration(TypedDict):
    name: str
    description: str
    input_schema: Mapping[str, object]
    cache_control: NotRequired[CacheControl]


class ThinkingSetting(TypedDict):
    """The `thinking` field: `enabled` with a budget, or `adaptive` (newer models)."""

    type: Literal["enabled", "adaptive"]
    budget_tokens: NotRequired[int]


class Body(TypedDict, total=False):
    """A Messages request (`POST /v1/messages`)."""

    model: str
    max_tokens: int
    system: list[TextBlock]
    messages: list[WireMessage]
    tools: list[ToolDeclaration]
    thinking: ThinkingSetting
    temperature: float
    top_p: float
    top_k: int
    stop_sequences: list[str]
    stream: bool


def configured() -> bool:
    """True when ANTHROPIC_API_KEY is set."""
    return bool(os.environ.get("ANTHROPIC_API_KEY"))


class AnthropicProvider(HTTPProvider):
    """Claude through `POST {base}/v1/messages` with `stream: true`."""

    name = "anthropic"
    path = "/v1/messages"
    default_model = "claude-sonnet-4-5"
    key_env = "ANTHROPIC_API_KEY"
    base_env = "ANTHROPIC_BASE_URL"
    default_base = "https://api.anthropic.com"
    official_base = default_base
    extra_options = {"max_tokens": 8192, "thinking": None, **sampling.defaults(SAMPLING)}
    not_found_hint = "check the model name (--model) and ANTHROPIC_BASE_URL"

    @property
    def key_required(self) -> bool:  # type: ignore[override]
        """A key is needed for api.anthropic.com; a local ANTHROPIC_BASE_URL decides itself."""
        return self.official

    def normalize_base(self, base: str) -> str:
        base = base.rstrip("/")
        return base[: -len("/v1")] if base.endswith("/v1") else base

    def __init__(self, model: str | None = None, **options: Any):
        super().__init__(model, **options)
        sampling.chosen(self.options, SAMPLING)  # a bad value is refused now
        thinking = _thinking(self.options["thinking"])
        budget = thinking.get("budget_tokens", 0) if thinking else 0
        if options.get("max_tokens") is not None and budget >= int(self.options["max_tokens"]):
            raise ConfigError(
                f"thinking={self.options['thinking']} thinks for up to {budget:,} tokens, "
                f"more than max_tokens={self.options['max_tokens']} leaves room for: raise "
                f"max_tokens above {budget:,} (e.g. {budget + 4096}), or leave max_tokens "
                "unset to have it raised for you, or choose a smaller thinking budget "
                "(thinking=1024)"
            )

    def headers(self, key: str | None) -> dict[str, str]:
        return {"x-api-key": key or "", "anthropic-version": "2023-06-01"}

    def max_tokens(self) -> int:
        """The reply limit sent: the option, raised to the thinking budget + 4,096 when the
        default leaves it no room (a chosen `max_tokens` was checked when it was given).
        Budgets assume this much output (`agent/budget.py`)."""
        limit = int(self.options["max_tokens"])
        thinking = _thinking(self.options["thinking"])
        budget = thinking.get("budget_tokens", 0) if thinking else 0
        return budget + 4096 if thinking is not None and budget >= limit else limit

    def parser(self, emit: Emit) -> _Stream:
        return _Stream(self, emit)

    def body(self, messages: list[Message], tools: Tools) -> Body:
        """The request body, with cache breakpoints on system, tools and the last message."""
        system, wire = to_wire(messages)
        body: Body = {"model": self.model, "max_tokens": self.max_tokens()}
        if system:
            system[-1]["cache_control"] = CACHE
            body["system"] = system
        body["messages"] = wire
        if tools:
            declared = [_tool(t) for t in tools]
            declared[-1]["cache_control"] = CACHE
            body["tools"] = declared
        thinking = _thinking(self.options["thinking"])
        if thinking is not None:
            body["thinking"] = thinking
        chosen = sampling.chosen(self.options, SAMPLING)
        if "temperature" in chosen:
            body["temperature"] = chosen["temperature"]
        if "top_p" in chosen:
            body["top_p"] = chosen["top_p"]
        if "top_k" in chosen:
            body["top_k"] = chosen["top_k"]
        if "stop" in chosen:
            body["stop_sequences"] = chosen["stop"]
        _mark_turn_start(wire)
        _mark_last(wire)
        body["stream"] = True
        return body


def to_wire(messages: list[Message]) -> tuple[list[TextBlock], list[WireMessage]]:
    """Neutral messages → (system blocks, Anthropic messages), same roles merged."""
    system: list[TextBlock] = []
    wire: list[WireMessage] = []

    def add(role: Literal["user", "assistant"], blocks: list[Block]) -> None:
        if not blocks:
            return
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": list(blocks)})
        if role == "user":
            content = wire[-1]["content"]
            content.sort(key=lambda b: b["type"] != "tool_result")

    for m in messages:
        if m["role"] == "system":
            system.extend(_text_blocks(m.get("content")))
        elif m["role"] == "user":  # the prompt's own images follow its text
            add("user", [*_text_blocks(m.get("content")), *_image_blocks(m)])
        elif m["role"] == "tool":
            add("user", [_tool_result(m)])
        elif m["role"] == "assistant":
            add("assistant", _assistant_blocks(m))
    return system, wire


def _text_blocks(content: str | None) -> list[TextBlock]:
    return [{"type": "text", "text": content}] if content else []


def _tool_result(m: ToolMessage) -> ToolResultBlock:
    content = m.get("content") or ""
    block: ToolResultBlock = {
        "type": "tool_result",
        "tool_use_id": m.get("tool_call_id", ""),
        "content": content,
    }
    images = _image_blocks(m)
    if images:  # the model sees what the card shows
        block["content"] = [{"type": "text", "text": content}, *images]
    if _failed(content):
        block["is_error"] = True
    return block


def _image_blocks(m: UserMessage | ToolMessage) -> list[ImageBlock]:
    """A message's images as Anthropic `image` blocks (base64 sources)."""
    return [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": i["mime_type"], "data": i["data"]},
        }
        for i in m.get("images") or []
        if isinstance(i, dict)
    ]


def _failed(content: str) -> bool:
    """Whether a tool result is the session's failure JSON (`"ok": false`)."""
    try:
        return bool(json.loads(content).get("ok") is False)
    except (TypeError, ValueError, AttributeError):
        return False


def _assistant_blocks(m: AssistantMessage) -> list[Block]:
    blocks: list[Block] = []
    for entry in m.get("thinking") or []:
        meta = mapping(mapping(entry.get("metadata")).get("anthropic"))
        if "redacted" in meta:
            blocks.append({"type": "redacted_thinking", "data": _echoed(meta["redacted"])})
        elif "signature" in meta:
            thinking = _echoed(meta.get("thinking", entry.get("text", "")))
            signature = _echoed(meta["signature"])
            blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
    blocks.extend(_text_blocks(m.get("content")))
    for call in m.get("tool_calls") or []:
        arguments = parse_arguments(call.get("arguments")) or {}
        blocks.append(
            {"type": "tool_use", "id": call["id"], "name": call["name"], "input": arguments}
        )
    return blocks


def _echoed(value: object) -> str:
    """A thinking block's field as this provider kept it (always a string); anything else
    (metadata edited by hand) is sent as its text, for the API to judge."""
    return value if isinstance(value, str) else str(value)


def _mark_turn_start(wire: list[WireMessage]) -> None:
    """Cache breakpoint on the turn's prompt, the last text the person wrote.

    Every request of the turn and of the later turns (until a compaction) repeats what
    ends there, while the last-message breakpoint moves each round: with system, tools
    and last message that makes Anthropic's four.
    """
    for message in reversed(wire[:-1]):
        if message["role"] != "user":
            continue
        texts = [b for b in message["content"] if b["type"] == "text"]
        if texts:
            texts[-1]["cache_control"] = CACHE
            return


def _mark_last(wire: list[WireMessage]) -> None:
    """Cache breakpoint on the last block that may carry one (not thinking blocks)."""
    if not wire:
        return
    for block in reversed(wire[-1]["content"]):
        if block["type"] != "thinking" and block["type"] != "redacted_thinking":
            block["cache_control"] = CACHE
            return


def _tool(tool: Mapping[str, object]) -> ToolDeclaration:
    fn = function(tool)
    return {
        "name": fn["name"],
        "description": fn["description"],
        "input_schema": fn["parameters"] or {"type": "object", "properties": {}},
    }


def _thinking(value: object) -> ThinkingSetting | None:
    """The `thinking` request field for the option: off, on, a budget, a level, adaptive."""
    on = switch(value)
    if not on:
        return None
    if on is True:
        return {"type": "enabled", "budget_tokens": THINKING_LEVELS["medium"]}
    text = str(on)
    if text == "adaptive":
        return {"type": "adaptive"}
    if text in THINKING_LEVELS:
        return {"type": "enabled", "budget_tokens": THINKING_LEVELS[text]}
    try:
        budget = int(text)
    except ValueError:
        raise ConfigError(
            f"option thinking for anthropic must be on, off, adaptive, low, medium, high or "
            f"a token budget (>= 1024), not {value!r}"
        ) from None
    if budget < 1024:
        raise ConfigError(
            f"option thinking for anthropic: the budget must be >= 1024, not {budget}"
        )
    return {"type": "enabled", "budget_tokens": budget}


@dataclass
class _Block:
    """A content block being streamed: its kind and ids, and its deltas as pieces, joined
    once when it stops."""

    kind: str
    id: str = ""
    name: str = ""
    data: str = ""
    text: list[str] = field(default_factory=list)
    json: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)


class _Stream(StreamParser):
    """Turns the Messages SSE events of one response into provider events."""

    end_marker = "message_stop"

    def __init__(self, provider: AnthropicProvider, emit: Emit):
        super().__init__(provider, emit)
        self.blocks: dict[int | None, _Block] = {}
        self.counts: dict[str, int] = {}

    def feed(self, name: str, data: object) -> None:
        if not isinstance(data, dict):
            return
        event: Event = data
        kind = event.get("type")
        if kind == "message_start":
            message = mapping(event.get("message"))
            self._usage(mapping(message.get("usage")))
            self.served = text(message.get("model")) or self.served
        elif kind == "content_block_start":
            self._start(_index(event), mapping(event.get("content_block")))
        elif kind == "content_block_delta":
            self._delta(self.blocks.get(_index(event)), mapping(event.get("delta")))
        elif kind == "content_block_stop":
            self._stop(self.blocks.pop(_index(event), None))
        elif kind == "message_delta":
            self.stop = text(mapping(event.get("delta")).get("stop_reason")) or self.stop
            self._usage(mapping(event.get("usage")))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            found = event.get("error") or {}
            error = mapping(found) if isinstance(found, dict) else {"message": found}
            etype = text(error.get("type")) or "error"
            raise self.provider.error(
                f"anthropic stream error: {etype}: {error.get('message', 'no details')}",
                retryable=etype in RETRYABLE_ERRORS,
            )

    def _usage(self, u: Event) -> None:
        """Keep the latest value of each count; message_delta's are cumulative. A count
        below zero is no count (it must not lower what was spent)."""
        self.counts.update({k: v for k, v in u.items() if isinstance(v, int) and v >= 0})

    def totals(self) -> Reported | None:
        """The round's counts; None when the stream carried none (the session estimates),
        and no input or output when the server left that one out."""
        if not self.counts:
            return None
        read = self.counts.get("cache_read_input_tokens", 0)
        write = self.counts.get("cache_creation_input_tokens", 0)
        usage: Reported = {"cache_read": read, "cache_write": write}
        if "input_tokens" in self.counts:
            usage["input"] = self.counts["input_tokens"] + read + write
        if "output_tokens" in self.counts:
            usage["output"] = self.counts["output_tokens"]
        return usage

    def _start(self, index: int | None, block: Event) -> None:
        kind = text(block.get("type"))
        self.blocks[index] = _Block(
            kind, text(block.get("id")), text(block.get("name")), text(block.get("data"))
        )
        if kind == "text" and text(block.get("text")):
            self.emit({"type": "saying", "text": text(block.get("text"))})

    def _delta(self, block: _Block | None, delta: Event) -> None:
        if block is None:
            return
        kind = delta.get("type")
        if kind == "text_delta" and text(delta.get("text")):
            self.emit({"type": "saying", "text": text(delta.get("text"))})
        elif kind == "thinking_delta" and text(delta.get("thinking")):
            block.text.append(text(delta.get("thinking")))
            self.emit({"type": "thinking", "text": block.text[-1]})
        elif kind == "signature_delta":
            block.signature.append(text(delta.get("signature")))
        elif kind == "input_json_delta":
            block.json.append(text(delta.get("partial_json")))

    def _stop(self, block: _Block | None) -> None:
        if block is None:
            return
        signature = "".join(block.signature)
        if block.kind == "thinking" and signature:
            meta = {"signature": signature, "thinking": "".join(block.text)}
            self.emit({"type": "thinking", "text": "", "metadata": {"anthropic": meta}})
        elif block.kind == "redacted_thinking":
            meta = {"redacted": block.data}
            self.emit({"type": "thinking", "text": "", "metadata": {"anthropic": meta}})
        elif block.kind == "tool_use":
            self.call(block.id, block.name, "".join(block.json))


def _index(event: Event) -> int | None:
    """The block an event is about: its `index` (0 when it has none; None when it is not
    a number, so such events only meet each other)."""
    return count(event.get("index", 0))
