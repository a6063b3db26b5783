"""Provider events and the stop-reason mapping shared by every provider.

A provider's `fetch(messages, tools, emit)` calls `emit(event)` with dicts that have a
string `type`:

| type       | keys                                        |
|------------|---------------------------------------------|
| `saying`   | text                                        |
| `thinking` | text, metadata?                             |
| `doing`    | id, name, arguments (dict), metadata?       |
| `usage`    | input, output, cache_read?, cache_write?    |
| `stop`     | reason (raw provider value), truncated      |
| `model`    | name: the model the server says answered    |

Any other type is ignored by the session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

Event = dict[str, Any]
Emit = Callable[[Event], None]

TRUNCATED = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_context_window_exceeded", "MAX_TOKENS"}
)
ERRORS = frozenset({"refusal", "content_filter", "error", "failed", "SAFETY"})

#: Stop reasons a turn can end with.
STOP_REASONS = (
    "end_turn",
    "tool_use",
    "max_tokens",
    "max_rounds",
    "error",
    "interrupted",
    "budget",
)
#: The exit code of a command line turn by its stop reason (any other: 0). A budget stop is
#: neither success nor failure: the line says how to raise the budget and go on.
EXIT_CODES = {"error": 1, "budget": 3, "interrupted": 130}


class Provider(Protocol):
    """What the session needs from a model: one `fetch` per round trip.

    `fetch` may be `async def` or a plain `def` (run in a worker thread).
    """

    def fetch(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], emit: Emit
    ) -> Awaitable[None] | None: ...


def map_stop_reason(raw: str | None, had_tool_calls: bool, truncated: bool = False) -> str:
    """Map a provider's raw finish reason to `end_turn`, `tool_use`, `max_tokens` or `error`.

    Truncation wins: a cut-off answer is never treated as a clean tool round.
    """
    if truncated or raw in TRUNCATED:
        return "max_tokens"
    if raw in ERRORS:
        return "error"
    if had_tool_calls:
        return "tool_use"
    return "end_turn"
