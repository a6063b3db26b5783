"""Sampling options (`-o temperature=0`, `-o seed=7`, `-o stop='["END"]'`), checked once.

Each provider accepts the ones its API has (`openai`: temperature, top_p, seed, stop and
`extra`; `responses`: temperature, top_p and `extra`; `anthropic`: temperature, top_p,
top_k, stop; `ollama`: temperature, top_p, top_k, seed, stop) and puts them where its
wire format wants them. `extra` is a JSON object merged into an OpenAI-compatible
request body as it is (`-o extra='{"min_p": 0.05, "repeat_penalty": 1.1}'`), for the
settings a local server has beyond OpenAI's; it may not replace what the request is made
of (model, messages, tools, stream).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from elelem_kernel.errors import ConfigError

#: Every sampling option and its default (unset: the server's own).
OPTIONS: dict[str, None] = {
    "temperature": None,
    "top_p": None,
    "top_k": None,
    "seed": None,
    "stop": None,
    "extra": None,
}
#: Body fields `extra` may not set: the request itself.
RESERVED = frozenset(
    {"model", "messages", "input", "instructions", "tools", "stream", "stream_options"}
)


class Chosen(TypedDict, total=False):
    """The sampling options set, checked; each provider puts them where its API wants."""

    temperature: float
    top_p: float
    top_k: int
    seed: int
    stop: list[str]
    #: Request fields merged into an OpenAI-compatible body as they are.
    extra: dict[str, object]


def defaults(names: Iterable[str]) -> dict[str, None]:
    """The options `names` with their defaults, for a provider's `extra_options`."""
    return {name: OPTIONS[name] for name in names}


def chosen(options: Mapping[str, object], names: Iterable[str]) -> Chosen:
    """The sampling options among `names` that are set, checked: numbers in range, `stop`
    as a list of strings, `extra` as an object. A ConfigError says what is wrong."""
    values: Chosen = {}
    for name in names:
        value = options.get(name)
        if value is None:
            continue
        if name == "temperature":
            values["temperature"] = _number(name, value, 0.0, 2.0)
        elif name == "top_p":
            values["top_p"] = _number(name, value, 0.0, 1.0)
        elif name == "top_k":
            values["top_k"] = int(_number(name, value, 0, None, whole=True))
        elif name == "seed":
            values["seed"] = int(_number(name, value, 0, None, whole=True))
        elif name == "stop":
            values["stop"] = _stop(value)
        elif name == "extra":
            values["extra"] = _extra(value)
    return values


def _number(name: str, value: Any, low: float, high: float | None, whole: bool = False) -> float:
    kind = "a whole number" if whole else "a number"
    try:
        number = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        number = None
    if number is None or (whole and not number.is_integer()):
        raise ConfigError(f"option {name} must be {kind}, not {value!r}")
    if number < low or (high is not None and number > high):
        bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
        raise ConfigError(f"option {name} must be {bounds}, not {value!r}")
    return number


def _stop(value: object) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) and i for i in items):
        raise ConfigError(
            f"option stop must be a text or a list of texts (stop='[\"END\"]'), not {value!r}"
        )
    return items


def _extra(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ConfigError(
            "option extra must be a JSON object of request fields "
            f"(extra='{{\"min_p\": 0.05}}'), not {value!r}"
        )
    taken = sorted(RESERVED & set(value))
    if taken:
        raise ConfigError(
            f"option extra may not set {', '.join(taken)}: the request is made of them"
        )
    return dict(value)
