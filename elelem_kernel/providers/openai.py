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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from elelem_kernel.errors import ConfigError
from elelem_kernel.events import AssistantMessage, Emit, Message, ToolMessage, UserMessage
from elelem_kernel.providers import sampling
from elelem_kernel.providers.http import HTTPProvider, StreamParser, parse_arguments, switch
from elelem_kernel.providers.wire_json import Event, Tools, count, counted, items, mapping, text

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired

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


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImageURL(TypedDict):
    url: str


class ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageURL


Part = TextPart | ImagePart


class FunctionCall(TypedDict):
    name: str
    #: The arguments as a JSON text (`"{}"` when there are none).
    arguments: str


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class PlainMessage(TypedDict):
    """A system or user message: text, or text and `image_url` parts."""

    role: Literal["system", "user"]
    content: str | list[Part]


class AssistantWire(TypedDict):
    role: Literal["assistant"]
    content: str | None
    tool_calls: NotRequired[list[ToolCall]]
    #: The reasoning that came with the calls (DeepSeek requires it back).
    reasoning_content: NotRequired[str]


class ToolResult(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str


ChatMessage = PlainMessage | AssistantWire | ToolResult


class StreamOptions(TypedDict):
    include_usage: bool


class ChatBody(TypedDict, total=False):
    """A Chat Completions request, before sampling's `extra` fields join it."""

    model: str
    messages: list[ChatMessage]
    tools: Tools
    max_completion_tokens: int
    max_tokens: int
    reasoning_effort: str
    temperature: float
    top_p: float
    seed: int
    stop: list[str]
    stream: bool
    stream_options: StreamOptions


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

    def body(self, messages: list[Message], tools: Tools) -> dict[str, object]:
        """The request body; sampling's `extra` fields are merged in last, as they are."""
        body: ChatBody = {"model": self.model, "messages": to_wire(messages)}
        if tools:
            body["tools"] = tools
        limit = self.max_tokens()
        if limit is not None and self.base_url == OPENAI_BASE:
            body["max_completion_tokens"] = limit
        elif limit is not None:
            body["max_tokens"] = limit
        effort = reasoning_effort(self.options["thinking"])
        if effort:
            body["reasoning_effort"] = effort
        chosen = sampling.chosen(self.options, self.sampling_options)
        if "temperature" in chosen:
            body["temperature"] = chosen["temperature"]
        if "top_p" in chosen:
            body["top_p"] = chosen["top_p"]
        if "seed" in chosen:
            body["seed"] = chosen["seed"]
        if "stop" in chosen:
            body["stop"] = chosen["stop"]
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        return {**body, **chosen.get("extra", {})}


def reasoning_effort(value: object) -> str | None:
    """The effort for the `thinking` option: None when off or unset, `medium` for on."""
    on = switch(value)
    if not on:
        return None
    return "medium" if on is True else str(on)


def to_wire(messages: list[Message]) -> list[ChatMessage]:
    """Neutral messages → Chat Completions messages.

    Tool messages cannot carry images: the images of a round's tool results follow its
    tool messages as one user message of `image_url` parts, each after a text part naming
    the call it came from. A prompt's own images follow its text as `image_url` parts.
    """
    wire: list[ChatMessage] = []
    pictures: list[Part] = []
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
            prompt: TextPart = {"type": "text", "text": m.get("content") or ""}
            wire.append({"role": "user", "content": [prompt, *prompt_image_parts(m)]})
        else:
            wire.append({"role": m["role"], "content": m.get("content") or ""})
    if pictures:
        wire.append({"role": "user", "content": pictures})
    return wire


def image_parts(m: ToolMessage) -> list[Part]:
    """A tool message's images as Chat Completions content parts, each labelled."""
    images = [i for i in m.get("images") or [] if isinstance(i, dict)]
    parts: list[Part] = []
    for n, image in enumerate(images, 1):
        which = f" {n} of {len(images)}" if len(images) > 1 else ""
        call = m.get("tool_call_id", "")
        parts.append({"type": "text", "text": f"Image{which} from tool call {call}:"})
        parts.append({"type": "image_url", "image_url": {"url": data_url(image)}})
    return parts


def prompt_image_parts(m: UserMessage) -> list[ImagePart]:
    """A user message's images as `image_url` parts (the prompt's text labels them)."""
    return [
        {"type": "image_url", "image_url": {"url": data_url(i)}}
        for i in m.get("images") or []
        if isinstance(i, dict)
    ]


def data_url(image: Mapping[str, object]) -> str:
    """`data:image/png;base64,...` for an image entry."""
    return f"data:{image['mime_type']};base64,{image['data']}"


def _assistant(m: AssistantMessage) -> AssistantWire:
    calls = m.get("tool_calls") or []
    if not calls:
        return {"role": "assistant", "content": m.get("content") or ""}
    message: AssistantWire = {"role": "assistant", "content": m.get("content") or None}
    message["tool_calls"] = [
        {
            "id": c["id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": dump_arguments(c.get("arguments"))},
        }
        for c in calls
    ]
    reasoning = "".join(
        text(mapping(mapping(t.get("metadata")).get("openai")).get("reasoning_content"))
        for t in m.get("thinking") or []
    )
    if reasoning:
        message["reasoning_content"] = reasoning
    return message


def dump_arguments(arguments: object) -> str:
    """Arguments as the JSON string the API wants: `"{}"`, never `""`."""
    if isinstance(arguments, str):
        return arguments if arguments.strip() else "{}"
    return json.dumps(arguments or {}, ensure_ascii=False)


@dataclass
class _Call:
    """A tool call being streamed: its arguments' fragments, joined once it is whole."""

    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _Stream(StreamParser):
    """Turns Chat Completions chunks into provider events."""

    end_marker = "its finish chunk and [DONE]"

    def __init__(self, provider: OpenAIProvider, emit: Emit):
        super().__init__(provider, emit)
        # Streamed pieces are kept in lists and joined once (`+=` on a string kept in a
        # dict or attribute copies it each time: quadratic in the number of fragments).
        self.calls: list[_Call] = []
        self.by_index: dict[int | None, _Call] = {}
        self.reasoning_content: list[str] = []

    def feed(self, name: str, data: object) -> None:
        if not isinstance(data, dict):  # first: comparing each chunk to "[DONE]" costs too
            if data == "[DONE]":
                self.done = True
            return
        chunk: Event = data
        if chunk.get("error") or name == "error":
            self._error(chunk.get("error", chunk))
        # Read inline (not through `text`, `items`): this runs once per token of the reply.
        model = chunk.get("model")
        if model and isinstance(model, str):
            self.served = model
        usage = chunk.get("usage")
        if isinstance(usage, dict) and usage:
            self._usage(usage)
        choices = chunk.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, dict) and choice.get("index", 0) == 0:
                    self._choice(choice)

    def _error(self, error: object) -> None:
        found = mapping(error) if isinstance(error, dict) else {"message": str(error)}
        kind = str(found.get("type") or found.get("code") or "error")
        raise self.provider.error(
            f"openai stream error: {kind}: {found.get('message', 'no details')}",
            retryable=kind in RETRYABLE_ERRORS,
        )

    def _usage(self, u: Event) -> None:
        self.usage = {}  # a count the server left out is missing, not zero
        if (prompt := count(u.get("prompt_tokens"))) is not None:
            self.usage["input"] = prompt
        if (completion := count(u.get("completion_tokens"))) is not None:
            self.usage["output"] = completion
        details = u.get("prompt_tokens_details")
        if isinstance(details, dict) and "cached_tokens" in details:
            if (cached := counted(details["cached_tokens"])) is not None:
                self.usage["cache_read"] = cached
        cost = u.get("cost")  # OpenRouter: what the request cost, in dollars
        if isinstance(cost, (int, float, str)) and not isinstance(cost, bool):
            self.usage["cost"] = cost

    def _choice(self, choice: Event) -> None:
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            delta = {}
        if "reasoning_content" in delta or "reasoning" in delta:
            self._reasoning(delta)
        content = delta.get("content")
        if content and isinstance(content, str):
            if self.reasoning_content:
                self._end_reasoning()
            self.emit({"type": "saying", "text": content})
        if "tool_calls" in delta:
            for fragment in items(delta["tool_calls"]):
                self._end_reasoning()
                if isinstance(fragment, dict):
                    self._fragment(fragment)
        finish = choice.get("finish_reason")
        if finish and isinstance(finish, str):
            self.stop = finish

    def _reasoning(self, delta: Event) -> None:
        """The reasoning text of a delta, from the first of `REASONING_FIELDS` it fills."""
        for field_name in REASONING_FIELDS:  # some servers send both with the same text
            reasoning = text(delta.get(field_name))
            if reasoning:
                if field_name == "reasoning_content":
                    self.reasoning_content.append(reasoning)
                self.emit({"type": "thinking", "text": reasoning})
                break

    def _end_reasoning(self) -> None:
        """Close the thinking block with the `reasoning_content` to echo, once it ends."""
        if self.reasoning_content:
            meta = {"openai": {"reasoning_content": "".join(self.reasoning_content)}}
            self.emit({"type": "thinking", "text": "", "metadata": meta})
            self.reasoning_content = []

    def _fragment(self, fragment: Event) -> None:
        index = count(fragment["index"]) if "index" in fragment else len(self.by_index)
        call_id = text(fragment.get("id"))
        fn = mapping(fragment.get("function"))
        call = self.by_index.get(index)
        if call is None or (call_id and call.id and call_id != call.id):
            call = _Call(call_id)
            self.by_index[index] = call
            self.calls.append(call)
        call.id = call.id or call_id
        call.name = call.name or text(fn.get("name"))
        arguments = fn.get("arguments")
        call.arguments.append(
            json.dumps(arguments) if isinstance(arguments, dict) else text(arguments)
        )

    def complete(self) -> bool:
        return self.done or self.stop is not None

    def flush(self) -> None:
        """The reasoning to echo, then every call in order (arguments arrive in fragments)."""
        self._end_reasoning()
        for call in self.calls:
            raw = "".join(call.arguments)
            self.buffered.append((call.id, call.name, parse_arguments(raw), raw))
