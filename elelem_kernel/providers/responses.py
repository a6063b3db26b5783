"""OpenAI Responses API over SSE, stateless (`store: false`).

Reasoning summaries stream as `thinking`; each finished reasoning item is handed to the
session whole, as `metadata={"responses": {"item": ...}}` on a `thinking` event, and
echoed untouched (with its `encrypted_content`) in the next request of the turn, before
the `function_call` and `function_call_output` items.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, TypedDict

from elelem_kernel.events import Emit, Message, ToolMessage, UserMessage
from elelem_kernel.providers import sampling
from elelem_kernel.providers.http import StreamParser
from elelem_kernel.providers.openai import (
    OpenAIProvider,
    data_url,
    dump_arguments,
    reasoning_effort,
)
from elelem_kernel.providers.wire_json import (
    Event,
    Tools,
    count,
    counted,
    function,
    items,
    mapping,
    text,
)

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired

#: Models that take reasoning settings; others get none unless `thinking` is set.
REASONING_MODELS = re.compile(r"(o\d|gpt-5|gpt-oss|codex)", re.IGNORECASE)
RETRYABLE_ERRORS = frozenset(
    {"server_error", "rate_limit_exceeded", "overloaded_error", "service_unavailable"}
)


class InputText(TypedDict):
    type: Literal["input_text"]
    text: str


class InputImage(TypedDict):
    type: Literal["input_image"]
    image_url: str


Content = str | list[InputText | InputImage]


class UserItem(TypedDict):
    role: Literal["user"]
    content: Content


class AssistantItem(TypedDict):
    role: Literal["assistant"]
    content: str


class FunctionCallItem(TypedDict):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str


class FunctionOutputItem(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    output: Content


#: An input item; a reasoning item is echoed exactly as the server sent it.
Item = UserItem | AssistantItem | FunctionCallItem | FunctionOutputItem | Mapping[str, object]


class FunctionTool(TypedDict):
    type: Literal["function"]
    name: str
    description: str
    parameters: Mapping[str, object]


class Reasoning(TypedDict):
    summary: Literal["auto"]
    effort: NotRequired[str]


class ResponsesBody(TypedDict, total=False):
    """A Responses request, before sampling's `extra` fields join it."""

    model: str
    instructions: str
    input: list[Item]
    tools: list[FunctionTool]
    reasoning: Reasoning
    include: list[str]
    max_output_tokens: int
    temperature: float
    top_p: float
    store: bool
    stream: bool


def configured() -> bool:
    """True when OPENAI_API_KEY is set."""
    return bool(os.environ.get("OPENAI_API_KEY"))


class ResponsesProvider(OpenAIProvider):
    """OpenAI's `POST {base}/responses` with `stream: true` and encrypted reasoning.

    The `thinking` option sets the reasoning effort (`low`, `medium`, `high`...) or `off`;
    the default `auto` asks reasoning models (o-series, gpt-5, gpt-oss, codex) for
    summaries and encrypted reasoning and sends other models no reasoning settings.
    """

    name = "responses"
    path = "/responses"
    default_model = "gpt-5"
    extra_options = {
        "max_tokens": None,
        "thinking": "auto",
        **sampling.defaults(("temperature", "top_p", "extra")),
    }
    sampling_options = ("temperature", "top_p", "extra")

    def parser(self, emit: Emit) -> _Stream:  # type: ignore[override]
        return _Stream(self, emit)

    def body(self, messages: list[Message], tools: Tools) -> dict[str, object]:
        """The request body: instructions from the system messages, the rest as items."""
        instructions, items = to_wire(messages)
        body: ResponsesBody = {"model": self.model}
        if instructions:
            body["instructions"] = instructions
        body["input"] = items
        if tools:
            body["tools"] = [_tool(t) for t in tools]
        thinking = str(self.options["thinking"]).lower()
        if thinking != "auto" or REASONING_MODELS.match(self.model.rsplit("/", 1)[-1]):
            effort = reasoning_effort(thinking)
            if effort:
                body["reasoning"] = {"summary": "auto"}
                if effort != "auto":
                    body["reasoning"]["effort"] = effort
                body["include"] = ["reasoning.encrypted_content"]
        if self.options["max_tokens"] is not None:
            body["max_output_tokens"] = int(self.options["max_tokens"])
        chosen = sampling.chosen(self.options, self.sampling_options)
        if "temperature" in chosen:
            body["temperature"] = chosen["temperature"]
        if "top_p" in chosen:
            body["top_p"] = chosen["top_p"]
        body["store"] = False
        body["stream"] = True
        return {**body, **chosen.get("extra", {})}


def to_wire(messages: list[Message]) -> tuple[str, list[Item]]:
    """Neutral messages → (instructions, input items)."""
    instructions: list[str] = []
    items: list[Item] = []
    for m in messages:
        if m["role"] == "system":
            instructions.append(m.get("content") or "")
        elif m["role"] == "user":  # the prompt's own images follow its text
            items.append({"role": "user", "content": _with_images(m.get("content") or "", m)})
        elif m["role"] == "tool":  # the output may be a list of input_text / input_image parts
            output = _with_images(m.get("content") or "", m)
            call_id = m.get("tool_call_id", "")
            items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        elif m["role"] == "assistant":
            for entry in m.get("thinking") or []:
                item = mapping(mapping(entry.get("metadata")).get("responses")).get("item")
                if item and isinstance(item, dict):
                    items.append(item)
            if m.get("content"):
                items.append({"role": "assistant", "content": m["content"]})
            for c in m.get("tool_calls") or []:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": c["id"],
                        "name": c["name"],
                        "arguments": dump_arguments(c.get("arguments")),
                    }
                )
    return "\n\n".join(i for i in instructions if i), items


def _with_images(content: str, m: UserMessage | ToolMessage) -> Content:
    """`content`, or it and the message's images as input parts when it has some."""
    images = [i for i in m.get("images") or [] if isinstance(i, dict)]
    if not images:
        return content
    text_part: InputText = {"type": "input_text", "text": content}
    return [text_part] + [{"type": "input_image", "image_url": data_url(i)} for i in images]


def _tool(tool: Mapping[str, object]) -> FunctionTool:
    fn = function(tool)
    return {
        "type": "function",
        "name": fn["name"],
        "description": fn["description"],
        "parameters": fn["parameters"] or {"type": "object", "properties": {}},
    }


class _Stream(StreamParser):
    """Turns Responses stream events into provider events."""

    end_marker = "response.completed"

    def __init__(self, provider: ResponsesProvider, emit: Emit):
        super().__init__(provider, emit)
        self.streamed: set[str] = set()
        self.summary: tuple[str, int] | None = None

    def feed(self, name: str, data: object) -> None:
        if not isinstance(data, dict):
            return
        event: Event = data
        kind = text(event.get("type")) or name
        response = mapping(event.get("response"))
        if isinstance(response.get("model"), str):
            self.served = text(response.get("model")) or self.served
        if kind == "response.output_text.delta":
            self._say(event)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self._think(event)
        elif kind == "response.output_item.done":
            self._item(mapping(event.get("item")))
        elif kind in ("response.completed", "response.incomplete"):
            self._usage(mapping(response.get("usage")))
            details = mapping(response.get("incomplete_details"))
            reason = text(details.get("reason")) or text(response.get("status"))
            self.stop = reason or kind.split(".")[1]
            self.done = True
        elif kind == "response.failed":
            error = mapping(response.get("error"))
            self._fail(error.get("code"), error.get("message"))
        elif kind == "error":
            error = mapping(event["error"]) if isinstance(event.get("error"), dict) else event
            self._fail(error.get("code") or error.get("type"), error.get("message"))

    def _fail(self, code: object, message: object) -> None:
        reason = str(code or "error")
        raise self.provider.error(
            f"responses stream error: {reason}: {message or 'no details'}",
            retryable=reason in RETRYABLE_ERRORS,
        )

    def _say(self, data: Event) -> None:
        self.streamed.add(text(data.get("item_id")))
        if text(data.get("delta")):
            self.emit({"type": "saying", "text": text(data.get("delta"))})

    def _think(self, data: Event) -> None:
        item_id = text(data.get("item_id"))
        part = (item_id, count(data.get("summary_index", 0)) or 0)
        if self.summary and self.summary != part and self.summary[0] == item_id:
            self.emit({"type": "thinking", "text": "\n\n"})
        self.summary = part
        self.streamed.add(item_id)
        if text(data.get("delta")):
            self.emit({"type": "thinking", "text": text(data.get("delta"))})

    def _item(self, item: Event) -> None:
        kind = item.get("type")
        streamed = text(item.get("id")) in self.streamed
        if kind == "reasoning":
            summary = [text(mapping(s).get("text")) for s in items(item.get("summary"))]
            said = "" if streamed else "\n\n".join(summary)
            self.emit({"type": "thinking", "text": said, "metadata": {"responses": {"item": item}}})
        elif kind == "message" and not streamed:
            for part in map(mapping, items(item.get("content"))):
                if part.get("type") == "output_text" and text(part.get("text")):
                    self.emit({"type": "saying", "text": text(part.get("text"))})
        elif kind == "function_call":
            self.call(text(item.get("call_id")), text(item.get("name")), item.get("arguments"))

    def _usage(self, u: Event) -> None:
        if not u:
            return
        self.usage = {}
        if (input_tokens := counted(u.get("input_tokens"))) is not None:
            self.usage["input"] = input_tokens
        if (output_tokens := counted(u.get("output_tokens"))) is not None:
            self.usage["output"] = output_tokens
        details = mapping(u.get("input_tokens_details"))
        if "cached_tokens" in details and (cached := counted(details["cached_tokens"])) is not None:
            self.usage["cache_read"] = cached
