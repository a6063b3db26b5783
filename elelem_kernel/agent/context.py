"""The model's context window: how big it is, how full a request makes it, and the meter.

Window, first that applies (tokens):
1. `/context-window N` in the session (`Session.context_window`);
2. the provider option `context_window` (`-o context_window=N`, `/option`, ELELEM_OPTIONS);
3. `ELELEM_CONTEXT_WINDOW` in the environment;
4. what the server said when it refused a request as too big (its context-overflow error);
5. what the server reports (`provider.context_window()`: llama.cpp's `/v1/models` and
   `/props`, vLLM's `max_model_len`, LM Studio's `/api/v0/models`, Ollama's `/api/show`);
6. at a provider's official endpoint, the table below for the model (longest matching
   prefix), else the provider's default;
7. anywhere else the window is unknown: `UNKNOWN_WINDOW`, small on purpose, so that
   compaction starts early rather than the server refusing the request. (A local server
   may serve any model under any name: `gpt-4.1` there is not OpenAI's.)

Token counts before the provider reports any are estimates (`estimate`): conservative,
since a tokenizer splits digits and non-Latin text finer than prose. Once the server
counted a request's input tokens, the session scales its estimates for that conversation
by the ratio (`calibrated`). The footer's meter shows the provider's count for the last
request when it gave one (`ctx 41k/200k`), else the estimate (`ctx ~41k/200k`); a window
that is only assumed ends in `?` (`ctx 1.2k/8.2k?`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from elelem_kernel.errors import ConfigError
from elelem_kernel.tokens import DIGIT_CHARS as DIGIT_CHARS  # named here as before
from elelem_kernel.tokens import TEXT_CHARS as TEXT_CHARS
from elelem_kernel.tokens import estimate as estimate

ENV = "ELELEM_CONTEXT_WINDOW"
OPTION = "context_window"
#: Compaction starts when the next request would pass this share of the window.
THRESHOLD = 0.8
#: Characters per token of prose, for budgets in characters (the history sent, a summary
#: request's transcript); token counts use the conservative `estimate`.
CHARS_PER_TOKEN = 4
#: How far a server's own count may move the estimate (reported / estimated): up to 4
#: times, never below the conservative estimate itself.
CALIBRATION_RANGE = (1.0, 4.0)
#: Known windows under this many tokens get the brief system prompt and tool descriptions.
BRIEF_BELOW = 16_000
#: The window assumed when nothing says how big it is (tokens).
UNKNOWN_WINDOW = 8_192
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


def parse_window(value: object) -> int:
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


def window_named(options: Mapping[str, object]) -> bool:
    """Whether the person named the window (the option among `options`, or ENV): no server
    is asked for it then."""
    return OPTION in options or bool(os.environ.get(ENV, "").strip())


def resolve_window(
    *,
    override: int | None,
    options: Mapping[str, object],
    provider_name: str | None,
    model: str | None,
    reported: int | None = None,
    learned: int | None = None,
    official: bool = True,
    environ: Mapping[str, str] | None = None,
) -> tuple[int, str]:
    """The window in tokens and where it came from (for `/context`).

    `learned`: stated by the server in a context-overflow error; `reported`: by its
    model-info endpoint; `official`: the provider talks to its vendor's own endpoint,
    where the model names in the table mean what they say.
    """
    env = os.environ if environ is None else environ
    if override:
        return override, "/context-window"
    if options.get(OPTION) is not None:
        return parse_window(options[OPTION]), f"the option {OPTION}"
    if env.get(ENV, "").strip():
        return parse_window(env[ENV]), ENV
    if learned:
        return int(learned), "stated by the server when it refused a request"
    if reported:
        return int(reported), f"reported by the {provider_name} server"
    if official:
        return known_window(provider_name, model), "known for this model"
    return UNKNOWN_WINDOW, (
        "unknown: the server does not say, so a small window is assumed; set it with "
        "/context-window N or -o context_window=N"
    )


def known(source: str) -> bool:
    """Whether a window from `source` (`resolve_window`'s second value) is more than assumed."""
    return not source.startswith("unknown")


def calibration(reported: int, estimated: int) -> float | None:
    """The factor that turns `estimated` into the server's `reported` count, bounded by
    `CALIBRATION_RANGE`; None when either is not a positive count."""
    if reported <= 0 or estimated <= 0:
        return None
    low, high = CALIBRATION_RANGE
    return min(max(reported / estimated, low), high)


def short(tokens: int) -> str:
    """`950`, `6.2k`, `41k`, `1.0m`: a token count that fits a footer."""
    if tokens < 1_000:
        return str(tokens)
    if tokens < 10_000:
        return f"{tokens / 1_000:.1f}k"
    if tokens < 1_000_000:
        return f"{round(tokens / 1_000)}k"
    return f"{tokens / 1_000_000:.1f}m"
