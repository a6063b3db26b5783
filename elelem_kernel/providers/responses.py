"""OpenAI Responses API over SSE, stateless (`store: false`).

Reasoning summaries stream as `thinking`; each finished reasoning item is handed to the
session whole, as `metadata={"responses": {"item": ...}}` on a `thinking` event, and
echoed untouched (with its `encrypted_content`) in the next request of the turn, before
the `function_call` and `function_call_output` items.
"""

from __future__ import annotations

import os
import re
from typing import Any

from elelem_kernel.events import Emit, Message
from elelem_kernel.providers import sampling
from elelem_kernel.providers.http import StreamParser
from elelem_kernel.providers.openai import (
    OpenAIProvider,
    data_url,
    dump_arguments,
    reasoning_effort,
)

#: Models that take reasoning settings; others get none unless `thinking` is set.
REASONING_MODELS = re.compile(r"(o\d|gpt-5|gpt-oss|codex)", re.IGNORECASE)
RETRYABLE_ERRORS = frozenset(
    {"server_error", "rate_limit_exceeded", "overloaded_error", "service_unavailable"}
)


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

    def body(self, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The request body: instructions from the system messages, the rest as items."""
        instructions, items = to_wire(messages)
        body: dict[str, Any] = {"model": self.model}
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
        extra = chosen.pop("extra", {})
        body.update(chosen)
        body["store"] = False
        body["stream"] = True
        body.update(extra)
        return body


def to_wire(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Neutral messages → (instructions, input items)."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "system":
            instructions.append(m.get("content") or "")
        elif m["role"] == "user":
            content: Any = m.get("content") or ""
            images = [i for i in m.get("images") or [] if isinstance(i, dict)]
            if images:  # the prompt's own images follow its text
                content = [{"type": "input_text", "text": content}] + [
                    {"type": "input_image", "image_url": data_url(i)} for i in images
                ]
            items.append({"role": "user", "content": content})
        elif m["role"] == "tool":
            output: Any = m.get("content") or ""
            images = [i for i in m.get("images") or [] if isinstance(i, dict)]
            if images:  # the output may be a list of input_text / input_image parts
                output = [{"type": "input_text", "text": output}] + [
                    {"type": "input_image", "image_url": data_url(i)} for i in images
                ]
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": m.get("tool_call_id", ""),
                    "output": output,
                }
            )
        elif m["role"] == "assistant":
            for entry in m.get("thinking") or []:
                item = ((entry.get("metadata") or {}).get("responses") or {}).get("item")
                if item:
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


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function", tool)
    return {
        "type": "function",
        "name": fn["name"],
        "description": fn.get("description", ""),
        "parameters": fn.get("parameters") or {"type": "object", "properties": {}},
    }


class _Stream(StreamParser):
    """Turns Responses stream events into provider events."""

    end_marker = "response.completed"

    def __init__(self, provider: ResponsesProvider, emit: Emit):
        super().__init__(provider, emit)
        self.streamed: set[str] = set()
        self.summary: tuple[str, int] | None = None

    def feed(self, name: str, data: Any) -> None:
        if not isinstance(data, dict):
            return
        kind = data.get("type") or name
        response = data.get("response")
        if isinstance(response, dict) and isinstance(response.get("model"), str):
            self.served = response["model"] or self.served
        if kind == "response.output_text.delta":
            self._say(data)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self._think(data)
        elif kind == "response.output_item.done":
            self._item(data.get("item") or {})
        elif kind in ("response.completed", "response.incomplete"):
            response = data.get("response") or {}
            self._usage(response.get("usage") or {})
            details = response.get("incomplete_details") or {}
            self.stop = details.get("reason") or response.get("status") or kind.split(".")[1]
            self.done = True
        elif kind == "response.failed":
            error = (data.get("response") or {}).get("error") or {}
            self._fail(error.get("code"), error.get("message"))
        elif kind == "error":
            error = data["error"] if isinstance(data.get("error"), dict) else data
            self._fail(error.get("code") or error.get("type"), error.get("message"))

    def _fail(self, code: Any, message: Any) -> None:
        code = str(code or "error")
        raise self.provider.error(
            f"responses stream error: {code}: {message or 'no details'}",
            retryable=code in RETRYABLE_ERRORS,
        )

    def _say(self, data: dict[str, Any]) -> None:
        self.streamed.add(data.get("item_id", ""))
        if data.get("delta"):
            self.emit({"type": "saying", "text": data["delta"]})

    def _think(self, data: dict[str, Any]) -> None:
        item_id = data.get("item_id", "")
        part = (item_id, data.get("summary_index", 0))
        if self.summary and self.summary != part and self.summary[0] == item_id:
            self.emit({"type": "thinking", "text": "\n\n"})
        self.summary = part
        self.streamed.add(item_id)
        if data.get("delta"):
            self.emit({"type": "thinking", "text": data["delta"]})

    def _item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        streamed = item.get("id", "") in self.streamed
        if kind == "reasoning":
            text = (
                ""
                if streamed
                else "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
            )
            self.emit({"type": "thinking", "text": text, "metadata": {"responses": {"item": item}}})
        elif kind == "message" and not streamed:
            for part in item.get("content") or []:
                if part.get("type") == "output_text" and part.get("text"):
                    self.emit({"type": "saying", "text": part["text"]})
        elif kind == "function_call":
            self.call(item.get("call_id") or "", item.get("name", ""), item.get("arguments"))

    def _usage(self, u: dict[str, Any]) -> None:
        if not u:
            return
        self.usage = {"input": u.get("input_tokens") or 0, "output": u.get("output_tokens") or 0}
        details = u.get("input_tokens_details") or {}
        if "cached_tokens" in details:
            self.usage["cache_read"] = details["cached_tokens"] or 0
