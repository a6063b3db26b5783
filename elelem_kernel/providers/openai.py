"""OpenAI Chat Completions over SSE, for OpenAI and every compatible server (vLLM,
llama.cpp, LM Studio, OpenRouter, DeepSeek...).

Tool calls arrive as fragments keyed by `index` (parallel calls interleave); `doing` is
emitted once per call after the finish chunk. Reasoning text is read from
`reasoning_content` or `reasoning`; `reasoning_content` is echoed back on the assistant
message that made tool calls (DeepSeek requires it) through
`metadata={"openai": {"reasoning_content": ...}}`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from elelem_kernel.errors import ConfigError
from elelem_kernel.events import AssistantMessage, Emit, Message, ToolMessage, UserMessage
from elelem_kernel.providers import sampling
from elelem_kernel.providers.http import HTTPProvider, StreamParser, parse_arguments, switch

OPENAI_BASE = "https://api.openai.com/v1"
#: The default reply limit for servers other than api.openai.com.
LOCAL_MAX_TOKENS = 8192
REASONING_FIELDS = ("reasoning_content", "reasoning")
#: The sampling options Chat Completions takes (`providers/sampling.py`).
SAMPLING = ("temperature", "top_p", "seed", "stop", "extra")
RETRYABLE_ERRORS = frozenset(
    {
        "server_error",
        "overloaded_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "service_unavailable",
    }
)


def configured() -> bool:
    """True when OPENAI_API_KEY (or OPENAI_BASE_URL, for a local server) is set."""
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


class OpenAIProvider(HTTPProvider):
    """Any Chat Completions endpoint: `POST {base}/chat/completions` with `stream: true`.

    The key is required for api.openai.com only; local servers usually need none.
    """

    name = "openai"
    path = "/chat/completions"
    default_model = "gpt-4.1"
    key_env = "OPENAI_API_KEY"
    base_env = "OPENAI_BASE_URL"
    default_base = OPENAI_BASE
    official_base = OPENAI_BASE
    extra_options = {"max_tokens": None, "thinking": None, **sampling.defaults(SAMPLING)}
    sampling_options: tuple[str, ...] = SAMPLING
    not_found_hint = "check the model name (--model) and OPENAI_BASE_URL (it usually ends in /v1)"

    @property
    def key_required(self) -> bool:  # type: ignore[override]
        """A key is needed for api.openai.com; other servers decide for themselves."""
        return self.base_url == OPENAI_BASE

    def __init__(self, model: str | None = None, **options: Any):
        super().__init__(model, **options)
        sampling.chosen(self.options, self.sampling_options)  # a bad value is refused now

    def parser(self, emit: Emit) -> _Stream:
        return _Stream(self, emit)

    def max_tokens(self) -> int | None:
        """The reply limit to send: the option; else LOCAL_MAX_TOKENS for servers other than
        api.openai.com (a local model without one can ramble to its context limit); `off`
        sends none."""
        value = self.options["max_tokens"]
        if value is None:
            return None if self.base_url == OPENAI_BASE else LOCAL_MAX_TOKENS
        if str(value).strip().lower() in ("off", "none", "no", "false", "0"):
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"option max_tokens must be a number or off, not {value!r}") from None

    def body(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The request body."""
        body: dict[str, Any] = {"model": self.model, "messages": to_wire(messages)}
        if tools:
            body["tools"] = tools
        limit = self.max_tokens()
        if limit is not None:
            field = "max_completion_tokens" if self.base_url == OPENAI_BASE else "max_tokens"
            body[field] = limit
        effort = reasoning_effort(self.options["thinking"])
        if effort:
            body["reasoning_effort"] = effort
        chosen = sampling.chosen(self.options, self.sampling_options)
        extra = chosen.pop("extra", {})
        body.update(chosen)
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        body.update(extra)
        return body


def reasoning_effort(value: Any) -> str | None:
    """The effort for the `thinking` option: None when off or unset, `medium` for on."""
    on = switch(value)
    if not on:
        return None
    return "medium" if on is True else str(on)


def to_wire(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages → Chat Completions messages.

    Tool messages cannot carry images: the images of a round's tool results follow its
    tool messages as one user message of `image_url` parts, each after a text part naming
    the call it came from. A prompt's own images follow its text as `image_url` parts.
    """
    wire: list[dict[str, Any]] = []
    pictures: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] != "tool" and pictures:
            wire.append({"role": "user", "content": pictures})
            pictures = []
        if m["role"] == "assistant":
            wire.append(_assistant(m))
        elif m["role"] == "tool":
            wire.append(
                {
                    "role": "tool",
                    "tool_call_id": m.get("tool_call_id", ""),
                    "content": m.get("content") or "",
                }
            )
            pictures.extend(image_parts(m))
        elif m["role"] == "user" and m.get("images"):
            text = {"type": "text", "text": m.get("content") or ""}
            wire.append({"role": "user", "content": [text, *prompt_image_parts(m)]})
        else:
            wire.append({"role": m["role"], "content": m.get("content") or ""})
    if pictures:
        wire.append({"role": "user", "content": pictures})
    return wire


def image_parts(m: ToolMessage) -> list[dict[str, Any]]:
    """A tool message's images as Chat Completions content parts, each labelled."""
    images = [i for i in m.get("images") or [] if isinstance(i, dict)]
    parts: list[dict[str, Any]] = []
    for n, image in enumerate(images, 1):
        which = f" {n} of {len(images)}" if len(images) > 1 else ""
        call = m.get("tool_call_id", "")
        parts.append({"type": "text", "text": f"Image{which} from tool call {call}:"})
        parts.append({"type": "image_url", "image_url": {"url": data_url(image)}})
    return parts


def prompt_image_parts(m: UserMessage) -> list[dict[str, Any]]:
    """A user message's images as `image_url` parts (the prompt's text labels them)."""
    return [
        {"type": "image_url", "image_url": {"url": data_url(i)}}
        for i in m.get("images") or []
        if isinstance(i, dict)
    ]


def data_url(image: dict[str, Any]) -> str:
    """`data:image/png;base64,...` for an image entry."""
    return f"data:{image['mime_type']};base64,{image['data']}"


def _assistant(m: AssistantMessage) -> dict[str, Any]:
    calls = m.get("tool_calls") or []
    message: dict[str, Any] = {"role": "assistant", "content": m.get("content") or None}
    if not calls:
        message["content"] = m.get("content") or ""
        return message
    message["tool_calls"] = [
        {
            "id": c["id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": dump_arguments(c.get("arguments"))},
        }
        for c in calls
    ]
    reasoning = "".join(
        ((t.get("metadata") or {}).get("openai") or {}).get("reasoning_content", "")
        for t in m.get("thinking") or []
    )
    if reasoning:
        message["reasoning_content"] = reasoning
    return message


def dump_arguments(arguments: Any) -> str:
    """Arguments as the JSON string the API wants: `"{}"`, never `""`."""
    if isinstance(arguments, str):
        return arguments if arguments.strip() else "{}"
    return json.dumps(arguments or {}, ensure_ascii=False)


class _Stream(StreamParser):
    """Turns Chat Completions chunks into provider events."""

    end_marker = "its finish chunk and [DONE]"

    def __init__(self, provider: OpenAIProvider, emit: Emit):
        super().__init__(provider, emit)
        # Streamed pieces are kept in lists and joined once (`+=` on a string kept in a
        # dict or attribute copies it each time: quadratic in the number of fragments).
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[int, dict[str, Any]] = {}
        self.reasoning_content: list[str] = []

    def feed(self, name: str, data: Any) -> None:
        if data == "[DONE]":
            self.done = True
            return
        if not isinstance(data, dict):
            return
        if data.get("error") or name == "error":
            self._error(data.get("error", data))
        if isinstance(data.get("model"), str) and data["model"]:
            self.served = data["model"]
        if data.get("usage"):
            self._usage(data["usage"])
        for choice in data.get("choices") or []:
            if choice.get("index", 0) == 0:
                self._choice(choice)

    def _error(self, error: Any) -> None:
        if not isinstance(error, dict):
            error = {"message": str(error)}
        kind = str(error.get("type") or error.get("code") or "error")
        raise self.provider.error(
            f"openai stream error: {kind}: {error.get('message', 'no details')}",
            retryable=kind in RETRYABLE_ERRORS,
        )

    def _usage(self, u: dict[str, Any]) -> None:
        self.usage = {}  # a count the server left out is missing, not zero
        if u.get("prompt_tokens") is not None:
            self.usage["input"] = u["prompt_tokens"]
        if u.get("completion_tokens") is not None:
            self.usage["output"] = u["completion_tokens"]
        details = u.get("prompt_tokens_details") or {}
        if isinstance(details, dict) and "cached_tokens" in details:
            self.usage["cache_read"] = details["cached_tokens"] or 0
        if u.get("cost") is not None:  # OpenRouter: what the request cost, in dollars
            self.usage["cost"] = u["cost"]

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta") or {}
        for field in REASONING_FIELDS:  # some servers send both with the same text
            text = delta.get(field)
            if isinstance(text, str) and text:
                if field == "reasoning_content":
                    self.reasoning_content.append(text)
                self.emit({"type": "thinking", "text": text})
                break
        if isinstance(delta.get("content"), str) and delta["content"]:
            self._end_reasoning()
            self.emit({"type": "saying", "text": delta["content"]})
        for fragment in delta.get("tool_calls") or []:
            self._end_reasoning()
            self._fragment(fragment)
        if choice.get("finish_reason"):
            self.stop = choice["finish_reason"]

    def _end_reasoning(self) -> None:
        """Close the thinking block with the `reasoning_content` to echo, once it ends."""
        if self.reasoning_content:
            meta = {"openai": {"reasoning_content": "".join(self.reasoning_content)}}
            self.emit({"type": "thinking", "text": "", "metadata": meta})
            self.reasoning_content = []

    def _fragment(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index", len(self.by_index))
        call_id = fragment.get("id") or ""
        fn = fragment.get("function") or {}
        call = self.by_index.get(index)
        if call is None or (call_id and call["id"] and call_id != call["id"]):
            call = {"id": call_id, "name": "", "arguments": []}
            self.by_index[index] = call
            self.calls.append(call)
        call["id"] = call["id"] or call_id
        call["name"] = call["name"] or fn.get("name") or ""
        arguments = fn.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        call["arguments"].append(arguments or "")

    def complete(self) -> bool:
        return self.done or self.stop is not None

    def flush(self) -> None:
        """The reasoning to echo, then every call in order (arguments arrive in fragments)."""
        self._end_reasoning()
        for call in self.calls:
            raw = "".join(call["arguments"])
            self.buffered.append((call["id"], call["name"], parse_arguments(raw), raw))
