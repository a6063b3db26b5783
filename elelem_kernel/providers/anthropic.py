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
from typing import Any

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

CACHE = {"type": "ephemeral"}
RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
THINKING_LEVELS = {"low": 2048, "medium": 8192, "high": 16000}
#: The sampling options the Messages API takes (`providers/sampling.py`).
SAMPLING = ("temperature", "top_p", "top_k", "stop")


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
        budget = (thinking or {}).get("budget_tokens", 0)
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
        budget = (thinking or {}).get("budget_tokens", 0)
        return budget + 4096 if thinking is not None and budget >= limit else limit

    def parser(self, emit: Emit) -> _Stream:
        return _Stream(self, emit)

    def body(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The request body, with cache breakpoints on system, tools and the last message."""
        system, wire = to_wire(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens()}
        if system:
            system[-1]["cache_control"] = CACHE
            body["system"] = system
        body["messages"] = wire
        if tools:
            body["tools"] = [_tool(t) for t in tools]
            body["tools"][-1]["cache_control"] = CACHE
        thinking = _thinking(self.options["thinking"])
        if thinking is not None:
            body["thinking"] = thinking
        chosen = sampling.chosen(self.options, SAMPLING)
        if "stop" in chosen:
            chosen["stop_sequences"] = chosen.pop("stop")
        body.update(chosen)
        _mark_turn_start(wire)
        _mark_last(wire)
        body["stream"] = True
        return body


def to_wire(messages: list[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Neutral messages → (system blocks, Anthropic messages), same roles merged."""
    system: list[dict[str, Any]] = []
    wire: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": list(blocks)})
        if role == "user":
            content = wire[-1]["content"]
            content.sort(key=lambda b: b.get("type") != "tool_result")

    for m in messages:
        if m["role"] == "system":
            system.extend(_text_blocks(m.get("content")))
        elif m["role"] == "user":  # the prompt's own images follow its text
            add("user", _text_blocks(m.get("content")) + _image_blocks(m))
        elif m["role"] == "tool":
            add("user", [_tool_result(m)])
        elif m["role"] == "assistant":
            add("assistant", _assistant_blocks(m))
    return system, wire


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [dict(b) for b in content]
    return [{"type": "text", "text": content}] if content else []


def _tool_result(m: ToolMessage) -> dict[str, Any]:
    content = m.get("content") or ""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.get("tool_call_id", "")}
    block["content"] = content
    images = _image_blocks(m)
    if images:  # the model sees what the card shows
        block["content"] = [{"type": "text", "text": content}, *images]
    if _failed(content):
        block["is_error"] = True
    return block


def _image_blocks(m: UserMessage | ToolMessage) -> list[dict[str, Any]]:
    """A message's images as Anthropic `image` blocks (base64 sources)."""
    return [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": i["mime_type"], "data": i["data"]},
        }
        for i in m.get("images") or []
        if isinstance(i, dict)
    ]


def _failed(content: Any) -> bool:
    """Whether a tool result is the session's failure JSON (`"ok": false`)."""
    try:
        return json.loads(content).get("ok") is False
    except (TypeError, ValueError, AttributeError):
        return False


def _assistant_blocks(m: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for entry in m.get("thinking") or []:
        meta = (entry.get("metadata") or {}).get("anthropic") or {}
        if "redacted" in meta:
            blocks.append({"type": "redacted_thinking", "data": meta["redacted"]})
        elif "signature" in meta:
            text = meta.get("thinking", entry.get("text", ""))
            blocks.append({"type": "thinking", "thinking": text, "signature": meta["signature"]})
    if m.get("content"):
        blocks.extend(_text_blocks(m["content"]))
    for call in m.get("tool_calls") or []:
        arguments = parse_arguments(call.get("arguments")) or {}
        blocks.append(
            {"type": "tool_use", "id": call["id"], "name": call["name"], "input": arguments}
        )
    return blocks


def _mark_turn_start(wire: list[dict[str, Any]]) -> None:
    """Cache breakpoint on the turn's prompt, the last text the person wrote.

    Every request of the turn and of the later turns (until a compaction) repeats what
    ends there, while the last-message breakpoint moves each round: with system, tools
    and last message that makes Anthropic's four.
    """
    for message in reversed(wire[:-1]):
        if message["role"] != "user":
            continue
        texts = [b for b in message["content"] if b.get("type") == "text"]
        if texts:
            texts[-1]["cache_control"] = CACHE
            return


def _mark_last(wire: list[dict[str, Any]]) -> None:
    """Cache breakpoint on the last block that may carry one (not thinking blocks)."""
    if not wire:
        return
    for block in reversed(wire[-1]["content"]):
        if block.get("type") not in ("thinking", "redacted_thinking"):
            block["cache_control"] = CACHE
            return


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function", tool)
    return {
        "name": fn["name"],
        "description": fn.get("description", ""),
        "input_schema": fn.get("parameters") or {"type": "object", "properties": {}},
    }


def _thinking(value: Any) -> dict[str, Any] | None:
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


class _Stream(StreamParser):
    """Turns the Messages SSE events of one response into provider events."""

    end_marker = "message_stop"

    def __init__(self, provider: AnthropicProvider, emit: Emit):
        super().__init__(provider, emit)
        self.blocks: dict[int, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}

    def feed(self, name: str, data: Any) -> None:
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "message_start":
            message = data.get("message") or {}
            self._usage(message.get("usage") or {})
            if isinstance(message.get("model"), str) and message["model"]:
                self.served = message["model"]
        elif kind == "content_block_start":
            self._start(data.get("index", 0), data.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(self.blocks.get(data.get("index", 0)), data.get("delta") or {})
        elif kind == "content_block_stop":
            self._stop(self.blocks.pop(data.get("index", 0), None))
        elif kind == "message_delta":
            self.stop = (data.get("delta") or {}).get("stop_reason") or self.stop
            self._usage(data.get("usage") or {})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = data.get("error") or {}
            etype = error.get("type", "error")
            raise self.provider.error(
                f"anthropic stream error: {etype}: {error.get('message', 'no details')}",
                retryable=etype in RETRYABLE_ERRORS,
            )

    def _usage(self, u: dict[str, Any]) -> None:
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

    def _start(self, index: int, block: dict[str, Any]) -> None:
        # Deltas are kept as lists of pieces and joined once when the block stops.
        self.blocks[index] = {**block, "text": [], "json": [], "signature": []}
        if block.get("type") == "text" and block.get("text"):
            self.emit({"type": "saying", "text": block["text"]})

    def _delta(self, block: dict[str, Any] | None, delta: dict[str, Any]) -> None:
        if block is None:
            return
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            self.emit({"type": "saying", "text": delta["text"]})
        elif kind == "thinking_delta" and delta.get("thinking"):
            block["text"].append(delta["thinking"])
            self.emit({"type": "thinking", "text": delta["thinking"]})
        elif kind == "signature_delta":
            block["signature"].append(delta.get("signature", ""))
        elif kind == "input_json_delta":
            block["json"].append(delta.get("partial_json", ""))

    def _stop(self, block: dict[str, Any] | None) -> None:
        if block is None:
            return
        for key in ("text", "json", "signature"):
            block[key] = "".join(block[key])
        kind = block.get("type")
        if kind == "thinking" and block["signature"]:
            meta = {"signature": block["signature"], "thinking": block["text"]}
            self.emit({"type": "thinking", "text": "", "metadata": {"anthropic": meta}})
        elif kind == "redacted_thinking":
            meta = {"redacted": block.get("data", "")}
            self.emit({"type": "thinking", "text": "", "metadata": {"anthropic": meta}})
        elif kind == "tool_use":
            self.call(block.get("id", ""), block.get("name", ""), block["json"])
