"""The model's context window: how big it is, how full a request makes it, and the meter.

Window, first that applies (tokens):
1. `/context-window N` in the session (`Session.context_window`);
2. the provider option `context_window` (`-o context_window=N`, `/option`, ELELEM_OPTIONS);
3. `ELELEM_CONTEXT_WINDOW` in the environment;
4. what the provider reports (`provider.context_window()`, e.g. Ollama's `/api/show`);
5. the table below for the model (longest matching prefix), else the provider's default.

Token counts before the provider reports any are estimates: 4 characters of the request's
JSON a token, the same rule `/context` uses. The footer's meter shows the provider's count
for the last request when it gave one (`ctx 41k/200k`), else the estimate (`ctx ~41k/200k`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from elelem_kernel.agent.media import request_tokens
from elelem_kernel.errors import ConfigError

ENV = "ELELEM_CONTEXT_WINDOW"
OPTION = "context_window"
#: Compaction starts when the next request would pass this share of the window.
THRESHOLD = 0.8
#: A provider is asked for its window (Ollama: `/api/show`) once a request is this big.
PROBE_FROM = 2_000
#: Characters of JSON per estimated token.
CHARS_PER_TOKEN = 4
#: Windows of common models, tokens, by name prefix (the longest prefix wins).
MODEL_WINDOWS: dict[str, int] = {
    "claude-": 200_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "qwen3": 40_960,
    "qwen2.5": 32_768,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "gemma3": 131_072,
    "mistral": 32_768,
    "deepseek-r1": 131_072,
    "gpt-oss": 131_072,
}
#: Windows of each provider's default model (and of the offline providers).
PROVIDER_WINDOWS: dict[str, int] = {
    "anthropic": 200_000,
    "openai": 1_047_576,
    "responses": 400_000,
    "ollama": 40_960,
    "demo": 200_000,
    "echo": 200_000,
    "stub": 200_000,
}
#: Anything else: a conservative window most current models exceed.
DEFAULT_WINDOW = 128_000

_SIZE = re.compile(r"(?i)\s*(\d+(?:\.\d+)?)\s*([km]?)\s*")


def parse_window(value: Any) -> int:
    """A window size from `6000`, `"6000"`, `"200k"` or `"1m"`; ConfigError otherwise."""
    if isinstance(value, bool):
        raise ConfigError(f"bad context window {value!r}: give a number of tokens (200000, 200k)")
    if isinstance(value, (int, float)):
        tokens = int(value)
    else:
        match = _SIZE.fullmatch(str(value))
        if not match:
            raise ConfigError(
                f"bad context window {value!r}: give a number of tokens (200000, 200k)"
            )
        scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
        tokens = int(float(match.group(1)) * scale)
    if tokens < 1_000:
        raise ConfigError(f"context window {tokens} is too small: give at least 1000 tokens")
    return tokens


def known_window(provider: str | None, model: str | None) -> int:
    """The table's window for `model` (longest prefix), else `provider`'s default, else 128k."""
    if model:
        matches = [name for name in MODEL_WINDOWS if model.startswith(name)]
        if matches:
            return MODEL_WINDOWS[max(matches, key=len)]
    return PROVIDER_WINDOWS.get(provider or "", DEFAULT_WINDOW)


def resolve_window(
    *,
    override: int | None,
    options: Mapping[str, Any],
    provider_name: str | None,
    model: str | None,
    reported: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[int, str]:
    """The window in tokens and where it came from (for `/context`)."""
    env = os.environ if environ is None else environ
    if override:
        return override, "/context-window"
    if options.get(OPTION) is not None:
        return parse_window(options[OPTION]), f"the option {OPTION}"
    if env.get(ENV, "").strip():
        return parse_window(env[ENV]), ENV
    if reported:
        return int(reported), f"reported by {provider_name}"
    return known_window(provider_name, model), "known for this model"


def estimate(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """Estimated tokens of a request: its messages' and tools' JSON, 4 characters a token,
    and each image a message carries by its pixels (`images.tokens`), not its base64."""
    size, pictures = 0, 0
    for m in messages:
        if m.get("images"):
            pictures += request_tokens(m)
            m = {k: v for k, v in m.items() if k != "images"}
        size += len(json.dumps(m, ensure_ascii=False, default=str))
    if tools:
        size += len(json.dumps(tools, ensure_ascii=False))
    return -(-size // CHARS_PER_TOKEN) + pictures


def short(tokens: int) -> str:
    """`950`, `6.2k`, `41k`, `1.0m`: a token count that fits a footer."""
    if tokens < 1_000:
        return str(tokens)
    if tokens < 10_000:
        return f"{tokens / 1_000:.1f}k"
    if tokens < 1_000_000:
        return f"{round(tokens / 1_000)}k"
    return f"{tokens / 1_000_000:.1f}m"


def meter(context: Mapping[str, Any] | None) -> str | None:
    """`ctx 41k/200k` (`ctx ~41k/200k` when estimated) for a record's `context`, or None."""
    if not isinstance(context, Mapping):
        return None
    used, window = context.get("used"), context.get("window")
    if not isinstance(used, int) or not isinstance(window, int) or window <= 0:
        return None
    mark = "~" if context.get("estimated") else ""
    return f"ctx {mark}{short(used)}/{short(window)}"
