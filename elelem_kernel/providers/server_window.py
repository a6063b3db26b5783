"""A local server's context window: asked from its model-info endpoints, or read from the
error it sends when a request does not fit.

Asked (`ask`), first that answers, for the model the provider uses (or the only one served):
- `GET /v1/models`: llama.cpp's `meta.n_ctx` (`n_ctx_train` is only what the model was
  trained for), vLLM's `max_model_len`, OpenRouter-style `context_length`;
- llama.cpp's `GET /props`: `default_generation_settings.n_ctx`, the context of one slot
  (smaller than `meta.n_ctx` when the server runs parallel slots), so the smaller wins;
  and `chat_template_caps.supports_tools`: false becomes a note (`template_note`);
- LM Studio's `GET /api/v0/models/{model}`: `loaded_context_length`, else
  `max_context_length`;
- Ollama's `POST /api/show`, when `/v1/models` says the model is Ollama's (`owned_by`
  `library`): its OpenAI-compatible endpoint has no window.

Read from a refusal (`overflow`): llama.cpp's `exceed_context_size_error` (`n_ctx`,
`n_prompt_tokens`, or its message), vLLM's and OpenAI's "maximum context length is N
tokens", OpenAI's `context_length_exceeded` (no number), Anthropic's "prompt is too long:
N tokens > M maximum", LM Studio's "loaded with context length of N tokens".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import quote

from elelem_kernel.providers.wire_json import mapping

if TYPE_CHECKING:
    from elelem_kernel.providers.http import HTTPProvider

_LLAMA = re.compile(
    r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)", re.I
)
_MAXIMUM = re.compile(r"maximum context length is (\d+) tokens", re.I)
_REQUESTED = re.compile(
    r"(?:you requested|request has|messages resulted in|prompt contains(?: at least)?) "
    r"(\d+) (?:input )?tokens",
    re.I,
)
_ANTHROPIC = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum", re.I)
_LMSTUDIO = re.compile(r"loaded with context length of (?:only )?(\d+) tokens", re.I)
_OVERFLOW_CODES = frozenset({"exceed_context_size_error", "context_length_exceeded"})


def overflow(status: int, text: str) -> tuple[int | None, int | None] | None:
    """`(limit, requested)` when the error body `text` says the request did not fit the
    context window (either may be None when the server did not give it); else None."""
    if status not in (400, 413, 422):
        return None
    found: object = {}
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        found = body.get("error", body)
    error = mapping(found) if isinstance(found, dict) else {"message": str(found)}
    message = str(error.get("message") or text)
    if error.get("type") == "exceed_context_size_error":
        limit, requested = _int(error.get("n_ctx")), _int(error.get("n_prompt_tokens"))
        if limit:
            return limit, requested
    if match := _LLAMA.search(message):
        return int(match.group(2)), int(match.group(1))
    if match := _ANTHROPIC.search(message):
        return int(match.group(2)), int(match.group(1))
    if match := _MAXIMUM.search(message):
        asked = _REQUESTED.search(message)
        return int(match.group(1)), int(asked.group(1)) if asked else None
    if match := _LMSTUDIO.search(message):
        return int(match.group(1)), None
    if error.get("code") in _OVERFLOW_CODES or error.get("type") in _OVERFLOW_CODES:
        return None, None
    return None


async def ask(provider: HTTPProvider) -> int | None:
    """The window the server at `provider.base_url` gives `provider.model`; None when no
    endpoint says (or none answers)."""
    root = provider.base_url.removesuffix("/v1")
    windows: list[int] = []
    listing = await provider.get_json(f"{root}/v1/models")
    entry = _entry(listing, provider.model)
    if entry is not None:
        meta = mapping(entry.get("meta"))
        for value in (meta.get("n_ctx"), entry.get("max_model_len"), entry.get("context_length")):
            if number := _int(value):
                windows.append(number)
                break
        if entry.get("owned_by") == "llamacpp" or meta:
            props = await provider.get_json(f"{root}/props")
            if (note := template_note(props)) and note not in provider.notes:
                provider.notes.append(note)
            settings = props.get("default_generation_settings") if isinstance(props, dict) else None
            if isinstance(settings, dict) and (slot := _int(settings.get("n_ctx"))):
                windows.append(slot)
    if not windows:
        studio = await provider.get_json(f"{root}/api/v0/models/{quote(provider.model, safe='')}")
        if isinstance(studio, dict):
            value = studio.get("loaded_context_length") or studio.get("max_context_length")
            if number := _int(value):
                windows.append(number)
    if not windows and entry is not None and entry.get("owned_by") in ("library", "ollama"):
        value = show_window(await provider.get_json(f"{root}/api/show", {"model": provider.model}))
        if value:
            windows.append(value)
    return min(windows) if windows else None


def template_note(props: object) -> str | None:
    """What to tell the person when llama.cpp's `/props` says its chat template cannot
    take tools (`chat_template_caps.supports_tools: false`): the server then drops them
    from every request without a word, and the model never calls one."""
    caps = props.get("chat_template_caps") if isinstance(props, dict) else None
    if not isinstance(caps, dict) or caps.get("supports_tools") is not False:
        return None
    return (
        "the llama.cpp server's chat template does not take tools, so it leaves them out "
        "and the model cannot call any: start llama-server with --jinja (and, if the "
        "model's own template has no tool calls, --chat-template-file FILE with one that does)"
    )


def show_window(data: object) -> int | None:
    """The context window in an `/api/show` answer: `num_ctx`, else `*.context_length`."""
    if not isinstance(data, dict):
        return None
    for line in str(data.get("parameters") or "").splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx" and value.strip().isdigit():
            return int(value.strip())
    info = data.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if str(key).endswith(".context_length") and isinstance(value, int) and value > 0:
                return value
    return None


def _entry(listing: object, model: str) -> Mapping[str, object] | None:
    """The entry of `model` in a `/v1/models` answer, else the only entry there is."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    for e in entries:
        if e.get("id") == model or model in (e.get("aliases") or []):
            return e
    return entries[0] if len(entries) == 1 else None


def _int(value: object) -> int | None:
    """A positive whole number, else None (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return int(value)
