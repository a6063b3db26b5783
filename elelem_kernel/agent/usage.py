"""What one round spent: the server's counts, cleaned, and estimates where it gave none.

A server's `usage` is not trusted to be sane: a count below zero, a fraction, a string
or a number past any real request is *missing*, not a count (a negative one used to
lower what a budget saw spent). A round whose server reported no input or no output
count (proxies and older OpenAI-compatible servers send no usage chunk) gets the
session's own estimate for it: the request's estimated input tokens, and the output
actually streamed, estimated the same way. Such a round's usage is marked estimated, and
so is the turn's (`usage_estimated` in the record, `~` in the footer), so budgets bind
on every server and a person can tell a count from a guess.

A gateway's cost (`cost` in the usage event: OpenRouter's `usage.cost`, LiteLLM's
`x-litellm-response-cost` header) is kept when it is a finite amount not below zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from elelem_kernel.agent.context import estimate
from elelem_kernel.agent.record import USAGE_KEYS
from elelem_kernel.events import Usage

#: More tokens than any one request holds: a count past it is a server's nonsense.
MOST_TOKENS = 10**10
#: More dollars than any one request costs.
MOST_DOLLARS = 10_000.0


class Spent(Usage, total=False):
    """A round's counts, cleaned, and the cost a gateway reported for it when sane."""

    cost: float


def count(value: object) -> int | None:
    """`value` as a token count, or None when it is not one (negative, huge, not a number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MOST_TOKENS:
        return None
    return value


def gateway_cost(value: object) -> float | None:
    """A cost a gateway reported, in dollars, or None when it is not a sane amount."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        dollars = float(value)
    except ValueError:
        return None
    return dollars if math.isfinite(dollars) and 0 <= dollars <= MOST_DOLLARS else None


def cleaned(event: Mapping[str, object]) -> Spent:
    """The counts of a usage event that are counts, and its cost if sane; others dropped."""
    kept: Spent = {}
    for key in USAGE_KEYS:
        value = count(event.get(key))
        if value is not None:
            kept[key] = value
    cost = gateway_cost(event.get("cost"))
    if cost is not None:
        kept["cost"] = cost
    return kept


def output_tokens(reply: Mapping[str, object]) -> int:
    """The estimated tokens of what a round streamed (its assistant message): text,
    thinking and tool calls, counted as a request's are."""
    if not (reply.get("content") or reply.get("thinking") or reply.get("tool_calls")):
        return 0
    return estimate([dict(reply)])


def completed(
    reported: Spent | None, input_estimate: int, reply: Mapping[str, object]
) -> tuple[Spent, bool]:
    """A round's usage: what the server reported (cleaned), its missing input and output
    counts filled with estimates; and whether any count is an estimate."""
    usage = cleaned(reported or {})
    estimated = False
    if "input" not in usage:
        usage["input"], estimated = max(int(input_estimate), 0), True
    if "output" not in usage:
        usage["output"], estimated = output_tokens(reply), True
    return usage, estimated
