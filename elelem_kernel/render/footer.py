"""The footer line under a turn, the same in every view: terminal, live widget and static.

Every view hands it the same fields, from the `turn_end` event (live views) or the turn
record (frozen output): usage, ms, rounds, stop, cost, provider/model and the context
meter (how much of the model's window the last request used).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem_kernel.agent.budget import gauge
from elelem_kernel.render.plain import footer_text


def footer_line(
    fields: Mapping[str, Any], provider: str | None = None, model: str | None = None
) -> str:
    """`in 1,234 · out 56 · 2.3 s · 2 rounds · end_turn · openai/gpt-x · $0.0012`.

    `cost` present but None means the session could not price the model ("cost unknown");
    absent or 0, no cost is shown. `rounds` is a count (event) or the list of rounds (record).
    `budget` (while one is set) adds `$0.42 of $2.00` or `41k of 200k tokens` for each
    budget in force, what its scope had spent at the end of the turn.
    The model is the one the server said answered (`served_model`) when it named another.
    """
    usage = fields.get("usage") or {}
    cost = fields.get("cost", usage.get("cost"))
    if "cost" in fields and cost is None:
        cost = "cost unknown"
    rounds = fields.get("rounds")
    if isinstance(rounds, list):
        rounds = len(rounds)
    line = footer_text(
        usage,
        fields.get("ms"),
        rounds if isinstance(rounds, int) else None,
        fields.get("stop"),
        provider or fields.get("provider"),
        fields.get("served_model") or model or fields.get("model"),
        cost if isinstance(cost, (int, float, str)) else None,
        fields.get("context"),
    )
    return " · ".join([line, *gauge(fields.get("budget"))])
