"""Ollama's native `/api/chat`, streamed as NDJSON.

Tool calls arrive whole, with object arguments, and without ids on older servers (an id
is made up then). `done_reason` stays `stop` after tool calls; the session's stop mapping
sees the calls. Thinking is echoed back on the assistant message, tool results carry
`tool_name` (and `tool_call_id`).
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any, Literal, TypedDict
from urllib.parse import urlsplit

from elelem_kernel.events import Emit, Message
from elelem_kernel.providers import sampling
from elelem_kernel.providers.http import HTTPProvider, StreamParser, parse_arguments, switch
from elelem_kernel.providers.server_window import show_window
from elelem_kernel.providers.wire_json import Event, Tools, counted, items, mapping, text

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from collections.abc import Mapping

    from typing_extensions import NotRequired

DEFAULT_HOST = "http://127.0.0.1:11434"
#: The sampling options `/api/chat` takes in its `options` (`providers/sampling.py`).
SAMPLING = ("temperature", "top_p", "top_k", "seed", "stop")


class CallFunction(TypedDict):
    index: int
    name: str
    #: Ollama takes the arguments as an object, not as a JSON text.
    arguments: Mapping[str, object]


class ToolCall(TypedDict):
    id: str
    function: CallFunction


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    thinking: NotRequired[str]
    tool_calls: NotRequired[list[ToolCall]]
    tool_name: NotRequired[str]
    tool_call_id: NotRequired[str]
    #: Base64 images, without a data URL's prefix.
    images: NotRequired[list[str]]


class ModelOptions(TypedDict, total=False):
    """The model settings `/api/chat` takes in `options`."""

    num_predict: int
    num_ctx: int
    temperature: float
    top_p: float
    top_k: int
    seed: int
    stop: list[str]


class ChatBody(TypedDict, total=False):
    """An `/api/chat` request."""

    model: str
    messages: list[ChatMessage]
    tools: Tools
    think: bool | str
    options: ModelOptions
    keep_alive: object
    stream: bool


def host_url(host: str | None) -> str:
    """OLLAMA_HOST as a URL: scheme and port 11434 added, 0.0.0.0 read as 127.0.0.1."""
    host = (host or "").strip().rstrip("/") or DEFAULT_HOST
    if "://" not in host:
        host = "http://" + host
    parts = urlsplit(host)
    name = parts.hostname or "127.0.0.1"
    if name in ("0.0.0.0", "::"):
        name = "127.0.0.1"
    if ":" in name:
        name = f"[{name}]"
    port = parts.port or (443 if parts.scheme == "https" else 11434)
    return f"{parts.scheme}://{name}:{port}{parts.path}".rstrip("/")


def configured() -> bool:
    """True when something listens at OLLAMA_HOST (one TCP connect, at most 0.3 s)."""
    parts = urlsplit(host_url(os.environ.get("OLLAMA_HOST")))
    try:
        with socket.create_connection((parts.hostname, parts.port or 11434), timeout=0.3):
            return True
    except OSError:
        return False


class OllamaProvider(HTTPProvider):
    """A local (or remote) Ollama: `POST {OLLAMA_HOST}/api/chat`."""

    name = "ollama"
    path = "/api/chat"
    framing = "ndjson"
    default_model = "qwen3"
    key_env = "OLLAMA_API_KEY"
    key_required = False
    base_env = "OLLAMA_HOST"
    default_base = DEFAULT_HOST
    extra_options = {
        "max_tokens": None,
        "thinking": None,
        "num_ctx": None,
        "keep_alive": None,
        "read_timeout": 300.0,
        **sampling.defaults(SAMPLING),
    }
    not_found_hint = "run `ollama pull {model}`"
    unreachable_hint = "is `ollama serve` running?"

    def __init__(self, model: str | None = None, **options: Any):
        super().__init__(model, **options)
        sampling.chosen(self.options, SAMPLING)  # a bad value is refused now

    def normalize_base(self, base: str) -> str:
        return host_url(base)

    def parser(self, emit: Emit) -> _Stream:
        return _Stream(self, emit)

    def body(self, messages: list[Message], tools: Tools) -> ChatBody:
        """The request body."""
        body: ChatBody = {"model": self.model, "messages": to_wire(messages)}
        if tools:
            body["tools"] = tools
        think = switch(self.options["thinking"])
        if think is not None:
            body["think"] = think
        options: ModelOptions = {}
        if self.options["max_tokens"] is not None:
            options["num_predict"] = int(self.options["max_tokens"])
        if self.options["num_ctx"] is not None:
            options["num_ctx"] = int(self.options["num_ctx"])
        chosen = sampling.chosen(self.options, SAMPLING)
        if "temperature" in chosen:
            options["temperature"] = chosen["temperature"]
        if "top_p" in chosen:
            options["top_p"] = chosen["top_p"]
        if "top_k" in chosen:
            options["top_k"] = chosen["top_k"]
        if "seed" in chosen:
            options["seed"] = chosen["seed"]
        if "stop" in chosen:
            options["stop"] = chosen["stop"]
        if options:
            body["options"] = options
        if self.options["keep_alive"] is not None:
            body["keep_alive"] = self.options["keep_alive"]
        body["stream"] = True
        return body

    async def takes_images(self) -> bool | None:
        """Whether the model takes images: `vision` among its `/api/show` capabilities;
        None when the server does not say (older servers)."""
        data = await self._show()
        capabilities = data.get("capabilities") if isinstance(data, dict) else None
        if not isinstance(capabilities, list):
            return None
        return "vision" in capabilities

    async def _show(self) -> object:
        """The `/api/show` answer for the model, or None (an error, or too large: no more
        than `SHOW_LIMIT` bytes of it are read)."""
        return await self.get_json(f"{self.base_url}/api/show", {"model": self.model}, SHOW_LIMIT)

    async def context_window(self) -> int | None:
        """The window Ollama gives this model: the `num_ctx` option when set, else what the
        server says (`ask_window`). (Ollama's own default `num_ctx` may be smaller: set it.)"""
        if self.options["num_ctx"] is not None:
            return int(self.options["num_ctx"])
        return await super().context_window()

    async def ask_window(self) -> int | None:
        """The model's `num_ctx` parameter or trained context length from `/api/show`;
        None when the server does not say."""
        return show_window(await self._show())


#: Bytes of an `/api/show` answer read (it carries the model's licence and template).
SHOW_LIMIT = 2_000_000


def to_wire(messages: list[Message]) -> list[ChatMessage]:
    """Neutral messages → Ollama messages."""
    wire: list[ChatMessage] = []
    names: dict[str, str] = {}
    for m in messages:
        if m["role"] == "assistant":
            message: ChatMessage = {"role": "assistant", "content": m.get("content") or ""}
            thinking = "".join(t.get("text", "") for t in m.get("thinking") or [])
            if thinking:
                message["thinking"] = thinking
            calls = m.get("tool_calls") or []
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "function": {
                            "index": i,
                            "name": c["name"],
                            "arguments": parse_arguments(c.get("arguments")) or {},
                        },
                    }
                    for i, c in enumerate(calls)
                ]
                names.update({c["id"]: c["name"] for c in calls})
            wire.append(message)
        elif m["role"] == "tool":
            call_id = m.get("tool_call_id", "")
            result: ChatMessage = {
                "role": "tool",
                "tool_name": names.get(call_id, ""),
                "tool_call_id": call_id,
                "content": m.get("content") or "",
            }
            images = [i["data"] for i in m.get("images") or [] if isinstance(i, dict)]
            if images:
                result["images"] = images
            wire.append(result)
        else:
            plain: ChatMessage = {"role": m["role"], "content": m.get("content") or ""}
            given = m.get("images") if m["role"] == "user" else None
            pictures = [i["data"] for i in given or [] if isinstance(i, dict)]
            if pictures:  # a prompt's own images
                plain["images"] = pictures
            wire.append(plain)
    return wire


class _Stream(StreamParser):
    """Turns `/api/chat` NDJSON objects into provider events."""

    end_marker = "its final `done` line"

    def __init__(self, provider: OllamaProvider, emit: Emit):
        super().__init__(provider, emit)
        self.usage = {"input": 0, "output": 0}

    def feed(self, name: str, data: object) -> None:
        if not isinstance(data, dict):
            return
        line: Event = data
        if line.get("error"):
            raise self.provider.error(f"ollama error: {line['error']}")
        self.served = text(line.get("model")) or self.served
        message = mapping(line.get("message"))
        if text(message.get("thinking")):
            self.emit({"type": "thinking", "text": text(message.get("thinking"))})
        if text(message.get("content")):
            self.emit({"type": "saying", "text": text(message.get("content"))})
        for call in items(message.get("tool_calls")):
            if not isinstance(call, dict):
                continue
            fn = mapping(call.get("function"))  # whole calls with object arguments: never buffered
            arguments = parse_arguments(fn.get("arguments")) or {}
            self.doing(text(call.get("id")), text(fn.get("name")), arguments)
        if line.get("done"):
            self.done = True
            self.stop = text(line.get("done_reason")) or "stop"
            self.usage = {}
            if (input_tokens := counted(line.get("prompt_eval_count"))) is not None:
                self.usage["input"] = input_tokens
            if (output_tokens := counted(line.get("eval_count"))) is not None:
                self.usage["output"] = output_tokens
