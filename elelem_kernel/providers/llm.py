"""Every model from simonw/llm's plugins: `-p llm --model ID`.

llm owns the models, keys, aliases and plugins; this provider only translates. Each round
the conversation is rebuilt from the session's messages as llm `Message`s and passed as
`messages=` (the history llm treats as authoritative), with the round's new input also
given the older way (`prompt`, `system`, `tool_results`) for plugins that read only
those. Nothing is written to llm's logs database unless the `log` option is on.

Async models are preferred. A sync-only model runs in a daemon thread that hands its
stream to the event loop through a queue, so the live view keeps refreshing and a
cancelled turn ends at once (the thread stops at its next chunk).

Stream events: text → `saying`, reasoning → `thinking`. After the stream: the tool calls
from the response's assembled messages (with their ids), usage, and the stop reason read
from the plugin's `response_json`. When those messages hold more than plain text and
calls (reasoning parts, `provider_metadata`, server-side tools), they ride along as opaque
metadata `{"llm": {"messages": [...]}}` on a text-less thinking event, so the next round
sends back exactly what the plugin produced.
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import threading
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from elelem_kernel.errors import ConfigError, ContextOverflow, ElelemError, ProviderError
from elelem_kernel.events import (
    TRUNCATED,
    AssistantMessage,
    Emit,
    Message,
    Provider,
    UsageEvent,
)
from elelem_kernel.options import unknown
from elelem_kernel.providers import server_window
from elelem_kernel.providers.openai import OpenAIProvider
from elelem_kernel.providers.wire_json import Tools, function, items, mapping
from elelem_kernel.sync import call_soon

INSTALL = "pip install 'elelem-kernel[llm]'"
#: Options of this provider itself; every other option goes to the llm model's Options.
OWN_OPTIONS = {"log": "write each response to llm's logs database (default: off)"}
CACHE_READ = ("cached_tokens", "cache_read_input_tokens", "cache_read_tokens")
CACHE_WRITE = ("cache_creation_input_tokens", "cache_write_tokens")


def load() -> Any:
    """The `llm` module, or a ConfigError naming the extra to install."""
    try:
        import llm
    except ImportError:
        raise ConfigError(
            f"the llm provider needs simonw/llm, which is not installed: {INSTALL} "
            "(then `llm install PLUGIN` for more models)"
        ) from None
    if not hasattr(llm, "Message"):
        version = getattr(llm, "__version__", "an old version")
        raise ConfigError(f"the llm provider needs llm 0.36 or later, not {version}: {INSTALL}")
    return llm


def about() -> str:
    """One line for `elelem-kernel providers`: how many models llm offers, or how to get it."""
    try:
        llm = load()
    except ConfigError:
        return f"not installed: {INSTALL}"
    count = len(llm.get_models_with_aliases())
    s = "" if count == 1 else "s"
    return f"{count} model{s} from llm's plugins (`llm models` lists them)"


def find_model(llm: Any, name: str) -> Any:
    """The async model `name` (an id or alias) when its plugin has one, else the sync one."""
    try:
        return llm.get_async_model(name)
    except llm.UnknownModelError:
        pass
    try:
        return llm.get_model(name)
    except llm.UnknownModelError:
        raise ConfigError(
            f'unknown llm model "{name}": `llm models` lists the installed models and '
            "their aliases; `llm install PLUGIN` adds more"
        ) from None


class PromptArguments(TypedDict, total=False):
    """The keyword arguments of an llm model's `prompt` for one round; the lists hold
    llm's own objects (`Message`, `Attachment`, `ToolResult`, `Tool`)."""

    options: dict[str, object]
    stream: bool
    system: str
    prompt: str
    attachments: list[object]
    tool_results: list[object]
    messages: list[object]
    tools: list[object]


def model_defaults(model_id: str) -> dict[str, object]:
    """The options set with `llm models options set` for this model."""
    try:
        from llm.cli import get_model_options
    except ImportError:
        return {}
    try:
        return dict(get_model_options(model_id) or {})
    except Exception:  # an unreadable model_options.json must not stop the prompt
        return {}


def check_options(model: Any, options: Mapping[str, object]) -> dict[str, object]:
    """`options` validated by the model's own Options class; ConfigError names the fix."""
    unknown(f"llm model {model.model_id}", options, option_names(model))
    try:
        model.Options(**options)
    except Exception as error:  # pydantic's ValidationError
        raise ConfigError(
            f"bad option for llm model {model.model_id}: {_problems(error)}"
        ) from None
    return dict(options)


def option_names(model: Any) -> list[str]:
    """The options of an llm model: its Options class's fields, and this provider's own."""
    return sorted({*getattr(model.Options, "model_fields", {}), *OWN_OPTIONS})


def _problems(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return str(error)
    parts = []
    for e in errors():
        where = ".".join(str(x) for x in e.get("loc", ())) or "options"
        parts.append(f"{where}: {e.get('msg', 'invalid')} (got {e.get('input')!r})")
    return "; ".join(parts)


class LLMProvider(Provider):
    """A model of llm's plugins; options go to the model's Options class (plus `log`)."""

    name = "llm"

    def __init__(self, model: str | None = None, **options: Any):
        llm = load()
        wanted = model or os.environ.get("ELELEM_MODEL") or llm.get_default_model()
        self.llm_model = find_model(llm, wanted)
        self.model: str = self.llm_model.model_id
        self.is_async = isinstance(self.llm_model, (llm.AsyncModel, llm.AsyncKeyModel))
        self.log = _flag(options.pop("log", False))
        given = {k: v for k, v in options.items() if v is not None}
        self.options: dict[str, object] = check_options(
            self.llm_model, {**model_defaults(self.model), **given}
        )
        self.known_options = option_names(self.llm_model)
        self._server: OpenAIProvider | None = None  # asked for the window of an api_base

    @property
    def api_base(self) -> str | None:
        """The server of one of llm's OpenAI-compatible models (`api_base` in its
        extra-openai-models.yaml): a local server or a gateway; None for the others."""
        base = getattr(self.llm_model, "api_base", None)
        return str(base) if base else None

    @property
    def official(self) -> bool:
        """False at an `api_base`: there a model name says nothing of its window or price."""
        return self.api_base is None

    async def context_window(self) -> int | None:
        """The window the server at `api_base` reports for the model, asked as the openai
        provider asks it (`server_window`); None for other models, or when it does not say."""
        if self.api_base is None:
            return None
        if self._server is None:
            name = getattr(self.llm_model, "model_name", None) or self.model
            self._server = OpenAIProvider(model=str(name), base_url=self.api_base, retries=0)
            #: What that server said of itself when asked for its window (the same list).
            self.notes = self._server.notes
        return await self._server.context_window()

    def __repr__(self) -> str:
        return f"LLMProvider(model={self.model!r})"

    def takes_images(self) -> bool:
        """Whether the model's plugin says it takes an image type (`attachment_types`)."""
        types = getattr(self.llm_model, "attachment_types", ()) or ()
        return any(str(t).startswith("image/") for t in types)

    async def aclose(self) -> None:
        """Close the client that asked for the window; llm's plugins own the others."""
        if self._server is not None:
            await self._server.aclose()

    async def fetch(self, messages: list[Message], tools: Tools, emit: Emit) -> None:
        """One round: stream the reply of `messages` as provider events."""
        llm = load()
        try:
            kwargs = request(llm, self.llm_model, messages, tools, self.options)
            if self.is_async:
                response = self.llm_model.prompt(**kwargs)
                async for event in response.astream_events():
                    _stream(event, emit)
                made, usage = await response.messages(), await response.usage()
            else:
                response = await self._sync(kwargs, emit)
                made, usage = response.messages(), response.usage()  # drained: no I/O
            self._finish(llm, made, usage, response.response_json, emit)
            if self.log:
                await asyncio.to_thread(log_response, llm, response)
        except (asyncio.CancelledError, ElelemError):
            raise
        except llm.NeedsKeyException as error:
            raise ConfigError(f"llm model {self.model}: {error}") from None
        except llm.ConversationNotSupported:
            raise ConfigError(
                f"llm model {self.model} cannot take a conversation (its plugin says so); "
                "start a new one (/clear or --new) and ask in one prompt, without tools"
            ) from None
        except Exception as error:
            raise failure(self.model, error) from None

    async def _sync(self, kwargs: PromptArguments, emit: Emit) -> Any:
        """Run a sync model in a daemon thread; its events come back through a queue."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stopped = threading.Event()

        def put(kind: str, value: Any) -> None:
            if not call_soon(loop, queue.put_nowait, (kind, value)):
                stopped.set()  # the loop is closed: nobody waits any more

        def work() -> None:
            try:
                response = self.llm_model.prompt(**kwargs)
                for event in response.stream_events():
                    if stopped.is_set():
                        return
                    put("event", event)
                put("done", response)
            except BaseException as error:
                put("error", error)

        threading.Thread(target=work, name=f"llm-{self.model}", daemon=True).start()
        try:
            while True:
                kind, value = await queue.get()
                if kind == "event":
                    _stream(value, emit)
                elif kind == "done":
                    return value
                else:
                    raise value
        finally:
            stopped.set()

    def _finish(self, llm: Any, made: list[Any], usage: Any, raw: Any, emit: Emit) -> None:
        """Tool calls, replay metadata, usage and stop, from the drained response."""
        messages = [m.to_dict() for m in made]
        calls = []
        text = []
        for message in messages:
            for part in message.get("parts", []):
                if part.get("type") == "tool_call" and not part.get("server_executed"):
                    part["tool_call_id"] = part.get("tool_call_id") or made_up_id()
                    calls.append(part)
                elif part.get("type") == "text":
                    text.append(part.get("text", ""))
        plain: AssistantMessage = {
            "role": "assistant",
            "content": "".join(text),
            "tool_calls": [
                {"id": c["tool_call_id"], "name": c["name"], "arguments": c.get("arguments")}
                for c in calls
            ],
        }
        if messages and [m.to_dict() for m in _assistant(llm, plain)] != messages:
            emit({"type": "thinking", "text": "", "metadata": {"llm": {"messages": messages}}})
        for call in calls:
            emit(
                {
                    "type": "doing",
                    "id": call["tool_call_id"],
                    "name": call["name"],
                    "arguments": call.get("arguments") or {},
                }
            )
        counts = usage_event(usage.input, usage.output, usage.details)
        if counts:
            emit(counts)
        reason = stop_reason(raw) or ("tool_use" if calls else "end_turn")
        emit({"type": "stop", "reason": reason, "truncated": reason in TRUNCATED})


def failure(model: str, error: Exception) -> ProviderError:
    """The error of a failed request: a `ContextOverflow` when the plugin's HTTP error (the
    openai SDK's, at an `api_base`) carries a server's refusal of a request too big for its
    window, so the turn compacts and retries as with the HTTP providers."""
    status = getattr(error, "status_code", None)
    response = getattr(error, "response", None)
    try:
        text = str(getattr(response, "text", None) or error)
    except Exception:  # a streamed body that was never read
        text = str(error)
    too_big = server_window.overflow(status, text) if isinstance(status, int) else None
    if too_big is not None:
        limit, requested = too_big
        message = f"llm model {model}: the request is too big for the context window ({error})"
        return ContextOverflow(message, limit=limit, requested=requested, status=status)
    return ProviderError(f"llm model {model} failed: {type(error).__name__}: {error}")


def _stream(event: Any, emit: Emit) -> None:
    if not event.chunk:
        return
    if event.type == "text":
        emit({"type": "saying", "text": event.chunk})
    elif event.type == "reasoning":
        emit({"type": "thinking", "text": event.chunk})


def request(
    llm: Any,
    model: Any,
    messages: list[Message],
    tools: Tools,
    options: Mapping[str, object],
) -> PromptArguments:
    """The keyword arguments of `model.prompt` for one round."""
    chain = to_llm(llm, messages, frozenset(getattr(model, "attachment_types", ()) or ()))
    kwargs: PromptArguments = {"options": dict(options), "stream": bool(model.can_stream)}
    system = next((m for m in messages if m.get("role") == "system"), None)
    if system and system.get("content"):
        kwargs["system"] = str(system["content"])
    last = chain[-1] if chain else None
    if last is not None and last.role == "user":
        kwargs["prompt"] = "".join(getattr(p, "text", "") for p in last.parts)
        attachments = [p.attachment for p in last.parts if getattr(p, "attachment", None)]
        if attachments:  # the prompt's own images
            kwargs["attachments"] = attachments
        chain = chain[:-1]
    elif last is not None and last.role == "tool":
        kwargs["tool_results"] = [
            llm.ToolResult(
                name=p.name,
                output=p.output,
                tool_call_id=p.tool_call_id,
                attachments=list(p.attachments),
            )
            for p in last.parts
        ]
        chain = chain[:-1]
    kwargs["messages"] = chain
    if tools and model.supports_tools:
        declared = [function(t) for t in tools]
        kwargs["tools"] = [
            llm.Tool(
                name=fn["name"],
                description=fn["description"],
                input_schema=fn["parameters"] or {"type": "object"},
            )
            for fn in declared
        ]
    return kwargs


def to_llm(llm: Any, messages: list[Message], accepts: frozenset[str] = frozenset()) -> list[Any]:
    """The session's messages as llm `Message`s; consecutive tool results share one.

    A tool message's images become attachments of its result, and a prompt's images
    attachment parts after its text, when their type is among `accepts` (the model's
    `attachment_types`); the others are named in the text.
    """
    from llm.parts import AttachmentPart, TextPart, ToolResultPart

    out: list[Any] = []
    names: dict[str, str] = {}
    for m in messages:
        if m["role"] == "assistant":
            for call in m.get("tool_calls") or []:
                names[str(call.get("id"))] = str(call.get("name", ""))
            out.extend(_assistant(llm, m))
        elif m["role"] == "tool":
            call_id = str(m.get("tool_call_id", ""))
            output, attachments = str(m.get("content") or ""), []
            for image in m.get("images") or []:
                if image.get("mime_type") in accepts:
                    raw = base64.b64decode(image["data"])
                    attachments.append(llm.Attachment(type=image["mime_type"], content=raw))
                else:
                    output += (
                        f"\n[image: {image.get('mime_type')}, a type this model does not take]"
                    )
            part = ToolResultPart(
                name=names.get(call_id, ""),
                output=output,
                tool_call_id=call_id,
                attachments=attachments,
            )
            if out and out[-1].role == "tool":
                out[-1].parts.append(part)
            else:
                out.append(llm.Message(role="tool", parts=[part]))
        elif m["role"] in ("system", "user"):
            text, parts = str(m.get("content") or ""), []
            for image in (m.get("images") if m["role"] == "user" else None) or []:
                if image.get("mime_type") in accepts:
                    raw = base64.b64decode(image["data"])
                    attachment = llm.Attachment(type=image["mime_type"], content=raw)
                    parts.append(AttachmentPart(attachment=attachment))
                else:
                    text += f"\n[image: {image.get('mime_type')}, a type this model does not take]"
            out.append(llm.Message(role=m["role"], parts=[TextPart(text=text), *parts]))
    return out


def _assistant(llm: Any, m: AssistantMessage) -> list[Any]:
    """An assistant message as llm Messages: the saved ones when this provider made it."""
    for block in m.get("thinking") or []:
        saved = items(mapping(mapping(block.get("metadata")).get("llm")).get("messages"))
        if saved:
            return [llm.Message.from_dict(d) for d in saved]
    from llm.parts import TextPart, ToolCallPart

    parts: list[Any] = []
    if m.get("content") or not m.get("tool_calls"):
        parts.append(TextPart(text=str(m.get("content") or "")))
    for call in m.get("tool_calls") or []:
        parts.append(
            ToolCallPart(
                name=str(call.get("name", "")),
                arguments=dict(call.get("arguments") or {}),
                tool_call_id=call.get("id"),
            )
        )
    return [llm.Message(role="assistant", parts=parts)]


def usage_event(input: int | None, output: int | None, details: Any) -> UsageEvent | None:
    """A `usage` event from llm's counts; cached tokens found by their usual names."""
    if input is None and output is None:
        return None
    event: UsageEvent = {"type": "usage", "input": input or 0, "output": output or 0}
    key: Literal["cache_read", "cache_write"]
    for key, names in (("cache_read", CACHE_READ), ("cache_write", CACHE_WRITE)):
        found = _find(details, names)
        if found is not None:
            event[key] = found
    return event


def _find(details: Any, names: tuple[str, ...], depth: int = 3) -> int | None:
    if not isinstance(details, Mapping) or depth == 0:
        return None
    for name in names:
        found = details.get(name)
        if isinstance(found, int):
            return found
    for value in details.values():
        found = _find(value, names, depth - 1)
        if found is not None:
            return found
    return None


def stop_reason(data: Any) -> str | None:
    """The raw finish reason in a plugin's `response_json`, where the common APIs put it."""
    if not isinstance(data, Mapping):
        return None
    candidates = [data.get("finish_reason"), data.get("stop_reason"), data.get("done_reason")]
    for key, field in (("choices", "finish_reason"), ("candidates", "finishReason")):
        items = data.get(key)
        if isinstance(items, list) and items and isinstance(items[0], Mapping):
            candidates.append(items[0].get(field))
    details = data.get("incomplete_details")
    if isinstance(details, Mapping):
        candidates.append(details.get("reason"))
    return next((c for c in candidates if isinstance(c, str) and c), None)


def log_response(llm: Any, response: Any) -> None:
    """Write `response` to llm's logs database, as `llm prompt` does."""
    import sqlite_utils
    from llm.migrations import migrate

    db = sqlite_utils.Database(llm.user_dir() / "logs.db")
    try:
        migrate(db)
        response.log_to_db(db)
    finally:
        db.close()


def made_up_id() -> str:
    """An id for a tool call the plugin made without one."""
    return f"call_{secrets.token_hex(8)}"


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
