"""Prices of known models, for the cost figure in footers and `/usage`.

Dollars per million tokens: (input, output, cache read, cache write). A model that is not
listed has an unknown cost: we say "unknown" rather than guess.
"""

from __future__ import annotations

from typing import Any

PRICES: dict[str, tuple[float, float, float, float]] = {
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


def price(model: str | None) -> tuple[float, float, float, float] | None:
    """The price row for `model`: exact name, else the longest listed prefix."""
    if not model:
        return None
    if model in PRICES:
        return PRICES[model]
    matches = [name for name in PRICES if model.startswith(name)]
    return PRICES[max(matches, key=len)] if matches else None


def cost(provider: str, model: str | None, usage: dict[str, Any]) -> float | None:
    """Dollars for `usage`, or None when the model's price is unknown.

    `input` counts every prompt token, cached ones included, as the session reports it.
    """
    if provider in FREE_PROVIDERS:
        return 0.0
    row = price(model)
    if row is None:
        return None
    p_in, p_out, p_read, p_write = row
    read = usage.get("cache_read", 0) or 0
    write = usage.get("cache_write", 0) or 0
    fresh = max((usage.get("input", 0) or 0) - read - write, 0)
    dollars = fresh * p_in + (usage.get("output", 0) or 0) * p_out + read * p_read + write * p_write
    return dollars / 1_000_000


def dollars(value: float) -> str:
    """The one way an amount of money is written (footer, /usage, budgets): `$2.00`,
    `$0.42`, and `$0.0012` for amounts under ten cents (still worth reading)."""
    if value and abs(value) < 0.1:
        return f"${value:.4f}"
    return f"${value:.2f}"
