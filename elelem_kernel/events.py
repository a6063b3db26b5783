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

Any other type is ignored by the session. Each row is a TypedDict below (`ProviderEvent`
is their union, `Emit` takes one), so mypy checks what the providers emit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired


class Saying(TypedDict):
    """A piece of the reply, streamed as tokens arrive."""

    type: Literal["saying"]
    text: str


class Thinking(TypedDict):
    """Reasoning text; `metadata` is opaque provider data echoed back next round, and an
    event carrying it closes the current thinking block."""

    type: Literal["thinking"]
    text: str
    metadata: NotRequired[dict[str, Any]]


class Doing(TypedDict):
    """One complete tool call."""

    type: Literal["doing"]
    id: str
    name: str
    arguments: dict[str, Any]
    metadata: NotRequired[dict[str, Any]]


class Usage(TypedDict, total=False):
    """Token counts: of one round (the `usage` event) or, summed, of a turn (the record's)."""

    input: int
    output: int
    cache_read: int
    cache_write: int


class Reported(Usage, total=False):
    """A round's token counts as a server reported them, and what a gateway said the
    request cost, in dollars, as it sent it (the session checks both: `agent/usage.py`)."""

    cost: float | str


class UsageEvent(Reported):
    """A round's token counts; a provider may report more than once, the last report wins."""

    type: Literal["usage"]


class Stop(TypedDict):
    """How the round ended: the provider's raw finish reason and whether it was cut off."""

    type: Literal["stop"]
    reason: str | None
    truncated: bool


class ServedModel(TypedDict):
    """The model the server says answered (a local server answers to any name)."""

    type: Literal["model"]
    name: str


#: What a provider's `fetch` emits.
ProviderEvent = Saying | Thinking | Doing | UsageEvent | Stop | ServedModel
Emit = Callable[[ProviderEvent], None]

TRUNCATED = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_context_window_exceeded", "MAX_TOKENS"}
)
ERRORS = frozenset({"refusal", "content_filter", "error", "failed", "SAFETY"})

#: Stop reasons a turn can end with.
STOP_REASONS = (
    "end_turn",
    "tool_use",
    "max_tokens",
    "context_full",
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
