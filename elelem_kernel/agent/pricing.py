"""Prices of known models, and the person's own, for the cost figure in footers and `/usage`.

Dollars per million tokens: (input, output, cache read, cache write). A model that is not
listed has an unknown cost: we say "unknown" rather than guess. Behind a gateway (a
company proxy, Azure OpenAI, OpenRouter, LiteLLM) the person gives the price with the
option `price` (`-o price=2/8`: input/output, an optional third figure for cached input),
and a cost the gateway reports wins over any price (`agent/usage.py` reads it).

Where a turn's cost came from is said in its record (`priced_by`: one of `PRICED_BY`)
and footer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from elelem_kernel.agent.record import USAGE_KEYS
from elelem_kernel.errors import ConfigError
from elelem_kernel.events import Usage

Row = tuple[float, float, float, float]

PRICES: dict[str, Row] = {
    "claude-opus-4": (15.0, 75.0, 1.5, 18.75),
    "claude-sonnet-4": (3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4": (1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": (0.8, 4.0, 0.08, 1.0),
    "gpt-4.1": (2.0, 8.0, 0.5, 0.0),
    "gpt-4.1-mini": (0.4, 1.6, 0.1, 0.0),
    "gpt-4o": (2.5, 10.0, 1.25, 0.0),
    "gpt-4o-mini": (0.15, 0.6, 0.075, 0.0),
    "gpt-5": (1.25, 10.0, 0.125, 0.0),
    "gpt-5-mini": (0.25, 2.0, 0.025, 0.0),
    "o4-mini": (1.1, 4.4, 0.275, 0.0),
}

#: Offline providers cost nothing.
FREE_PROVIDERS = frozenset({"demo", "echo", "stub", "ollama"})


#: The option that gives a price, and how it is written.
OPTION = "price"
PRICE_FORM = "dollars per million tokens as IN/OUT or IN/OUT/CACHED, e.g. price=2/8"
#: Where a turn's cost came from (the record's `priced_by`): the known table, the
#: person's option, what the gateway reported, an offline provider.
PRICED_BY = ("table", "option", "gateway", "free")
_FIGURES = re.compile(r"\s*\$?\s*(\d+(?:\.\d*)?|\.\d+)\s*")


def parse_price(value: object) -> Row:
    """The row for the option `price`: `2/8` (input/output) or `2/8/0.5` (and cached input),
    dollars per million tokens. Cache writes cost the input price. ConfigError otherwise."""
    text = str(value).strip()
    parts = text.split("/")
    figures = [_FIGURES.fullmatch(part) for part in parts]
    if len(parts) not in (2, 3) or not all(figures) or isinstance(value, bool):
        raise ConfigError(f"option price must be {PRICE_FORM}, not {text!r}")
    numbers = [float(m[1]) for m in figures if m]
    if not all(math.isfinite(n) and n <= 1_000_000 for n in numbers):
        raise ConfigError(f"option price must be {PRICE_FORM}, not {text!r}")
    p_in, p_out = numbers[0], numbers[1]
    return (p_in, p_out, numbers[2] if len(numbers) == 3 else p_in, p_in)


def price(model: str | None) -> Row | None:
    """The price row for `model`: exact name, else the longest listed prefix."""
    if not model:
        return None
    if model in PRICES:
        return PRICES[model]
    matches = [name for name in PRICES if model.startswith(name)]
    return PRICES[max(matches, key=len)] if matches else None


def cost(provider: str, model: str | None, usage: Usage) -> float | None:
    """Dollars for `usage`, or None when the model's price is unknown.

    `input` counts every prompt token, cached ones included, as the session reports it.
    """
    if provider in FREE_PROVIDERS:
        return 0.0
    row = price(model)
    return None if row is None else cost_at(row, usage)


def cost_at(row: Row, usage: Mapping[str, object]) -> float:
    """Dollars for `usage` at the prices of `row`; counts below zero count as none."""

    def n(key: str) -> float:
        value = usage.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return 0.0
        return max(float(value), 0.0) if math.isfinite(value) else 0.0

    p_in, p_out, p_read, p_write = row
    read, write = n("cache_read"), n("cache_write")
    fresh = max(n("input") - read - write, 0)
    dollars = fresh * p_in + n("output") * p_out + read * p_read + write * p_write
    return dollars / 1_000_000


def turn_cost(
    row: Row | None,
    source: str,
    usage: Usage,
    gateway: tuple[float, Usage] | None = None,
) -> tuple[float | None, str | None]:
    """A turn's cost and where it came from (`PRICED_BY`): what the gateway reported for
    the rounds it covered (`gateway`: its dollars and those rounds' usage), and the rest
    of `usage` at `row` from `source`; (None, None) when some of it has no price."""
    if gateway is None:
        return (None, None) if row is None else (cost_at(row, usage), source)
    reported, covered = gateway
    rest: Usage = {}
    for key in USAGE_KEYS:
        if key in usage:
            rest[key] = max(usage.get(key, 0) - covered.get(key, 0), 0)
    if not any(rest.values()):
        return reported, "gateway"
    if row is None:
        return None, None
    return reported + cost_at(row, rest), "gateway"


def dollars(value: float) -> str:
    """The one way an amount of money is written (footer, /usage, budgets): `$2.00`,
    `$0.42`, and `$0.0012` for amounts under ten cents (still worth reading)."""
    if value and abs(value) < 0.1:
        return f"${value:.4f}"
    return f"${value:.2f}"
