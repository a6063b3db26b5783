"""Provider options from where people type them.

    elelem-kernel ask -o max_tokens=2000 -o thinking=high "..."
    %%elelem -p llm --model echo --option thinking=true
    /option read_timeout 300
    ELELEM_OPTIONS='max_tokens=4096,thinking=off'

A value is parsed as JSON when it parses (`2000`, `0.2`, `true`, `["a", "b"]`), else kept
as a string (`high`). ELELEM_OPTIONS is the base layer; options given on the command
line, in a cell or with `/option` win over it. The provider checks the names: an unknown
one is a ConfigError that lists the provider's options.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping

from elelem_kernel.errors import ConfigError
from elelem_kernel.redaction import SECRET_NAME

ENV = "ELELEM_OPTIONS"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
#: ELELEM_OPTIONS splits at commas that start a new `name=`, so JSON lists survive.
_SPLIT = re.compile(r",\s*(?=[A-Za-z_][A-Za-z0-9_.-]*\s*=)")


def parse_value(text: str) -> object:
    """`text` as JSON when it parses, else the string itself (stripped)."""
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text


def check_name(name: str) -> str:
    """`name` if it is a plain option name, else a ConfigError."""
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise ConfigError(f"bad option name {name!r}: use letters, digits and _ (max_tokens=2000)")
    return name


def parse_pair(text: str) -> tuple[str, object]:
    """`NAME=VALUE` as `(name, parsed value)`."""
    name, equals, value = text.partition("=")
    if not equals:
        raise ConfigError(f"option {text!r} needs a value: write NAME=VALUE (max_tokens=2000)")
    return check_name(name), parse_value(value)


def parse_pairs(items: Iterable[str] | None) -> dict[str, object]:
    """Repeated `-o NAME=VALUE` arguments as a dict (a later one wins)."""
    return dict(parse_pair(item) for item in items or ())


def from_env(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """The options in ELELEM_OPTIONS (`name=value,name=value`)."""
    text = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not text:
        return {}
    try:
        return parse_pairs(p for p in _SPLIT.split(text) if p.strip())
    except ConfigError as error:
        raise ConfigError(f"{ENV}: {error}") from None


def describe(options: Mapping[str, object]) -> str:
    """`name=value` pairs for messages, values as JSON; keys and passwords are hidden."""
    return ", ".join(
        f"{k}={'***' if SECRET_NAME.search(k) else json.dumps(v, ensure_ascii=False)}"
        for k, v in options.items()
    )


def unknown(provider: str, given: Iterable[str], known: Iterable[str]) -> None:
    """Raise the ConfigError for options of `given` that `provider` does not know; where
    `extra` is known (a body field the server alone knows, such as llama.cpp's `top_k`),
    it says how to send them through it."""
    values = given if isinstance(given, Mapping) else {}
    known = sorted(set(known))
    wrong = sorted(set(given) - set(known))
    if wrong:
        s = "s" if len(wrong) > 1 else ""
        hint = ""
        if "extra" in known:
            fields = json.dumps({n: values.get(n, "...") for n in wrong}, ensure_ascii=False)
            hint = f". A field the server knows goes in extra: -o extra='{fields}'"
        raise ConfigError(
            f"unknown option{s} for {provider}: {', '.join(wrong)}. "
            f"Known options: {', '.join(known) or 'none'}{hint}"
        )
