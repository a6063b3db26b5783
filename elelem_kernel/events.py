"""The provider contract: `Provider`, the events its `fetch` emits, and the stop-reason
mapping shared by every provider.

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

What the session may ask of a model besides (its window, whether it takes images, its
output cap, a capped copy, closing it) are methods of `Provider` with defaults, so the
session calls them plainly; a plugin's duck-typed provider is wrapped in `Foreign`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypedDict

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


class ToolCallEntry(TypedDict):
    """A tool call an assistant message carries back to the model."""

    id: str
    name: str
    arguments: dict[str, Any]
    metadata: NotRequired[dict[str, Any]]


class ThinkingBlock(TypedDict):
    """A block of reasoning an assistant message carries back (its `metadata` opaque)."""

    text: str
    metadata: NotRequired[dict[str, Any]]


class SystemMessage(TypedDict):
    """The system prompt."""

    role: Literal["system"]
    content: str


class UserMessage(TypedDict):
    """What the person wrote (or a summary standing in for earlier turns)."""

    role: Literal["user"]
    content: str
    #: The prompt's own images (an ACP client's image blocks), after its text.
    images: NotRequired[list[dict[str, Any]]]


class AssistantMessage(TypedDict):
    """A reply of the model: its text, and the thinking and tool calls it made."""

    role: Literal["assistant"]
    content: str
    tool_calls: NotRequired[list[ToolCallEntry]]
    thinking: NotRequired[list[ThinkingBlock]]


class ToolMessage(TypedDict):
    """A tool call's result as JSON text, and the images it returned (`agent/media.py`)."""

    role: Literal["tool"]
    tool_call_id: str
    content: str
    images: NotRequired[list[dict[str, Any]]]


#: What a provider's `fetch` is sent: OpenAI-like messages, one TypedDict per role.
Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage

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


class Provider(ABC):
    """What the session needs from a model: one `fetch` per round trip, and what it may
    ask of the model besides, each with a default a provider overrides when it knows more.

    `fetch` may be `async def` or a plain `def` (run in a worker thread); so may
    `context_window` and `takes_images`. Every provider of the package subclasses this; a
    plugin's provider that does not is wrapped in `Foreign` (`as_provider`).
    """

    #: The model asked for, or None when the provider names none.
    model: str | None = None
    #: The option names it accepts, for `/option` and its completions; None: it does not say.
    known_options: Sequence[str] | None = None
    #: The options it was made with; `max_tokens` among them caps its replies.
    options: Mapping[str, Any] = MappingProxyType({})
    #: What the server said of itself that the person should know (found when it was asked
    #: for its window); the session says each once.
    notes: Sequence[str] = ()

    @abstractmethod
    def fetch(
        self, messages: list[Message], tools: list[dict[str, Any]], emit: Emit
    ) -> Awaitable[None] | None:
        """One round trip: `emit` the reply to `messages` as provider events."""

    @property
    def official(self) -> bool:
        """Whether it talks to its vendor's own endpoint, where a model name has a known
        window and price; a provider that does not say is taken at its word."""
        return True

    def context_window(self) -> int | None | Awaitable[int | None]:
        """The window the server gives the model (a local server's is only known by
        asking it), or None when it does not say."""
        return None

    def takes_images(self) -> bool | None | Awaitable[bool | None]:
        """Whether the model takes images, or None when the provider does not know."""
        return None

    def max_tokens(self) -> int | None:
        """The output cap it sends itself: its `max_tokens` option, or None."""
        value = self.options.get("max_tokens")
        return None if value is None else int(value)

    def limited(self, max_tokens: int) -> Provider:
        """A provider whose replies stop at `max_tokens` (a budget's cap, a summary's
        limit); one that cannot cap its replies returns itself."""
        return self

    async def aclose(self) -> None:
        """Close its connections (on the loop that opened them); nothing to close here."""
        return None


class Foreign(Provider):
    """A provider written to the duck-typed contract without subclassing `Provider` (a
    plugin's, as the README shows one): its own members where it has them, the defaults
    where it has none, and any other attribute of its own as it is."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being made): no loop through itself
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return repr(self.inner)

    def fetch(
        self, messages: list[Message], tools: list[dict[str, Any]], emit: Emit
    ) -> Awaitable[None] | None:
        fetch: Callable[..., Awaitable[None] | None] = self.inner.fetch
        return fetch(messages, tools, emit)

    @property
    def model(self) -> str | None:
        return getattr(self.inner, "model", None)

    @model.setter
    def model(self, value: str | None) -> None:
        self.inner.model = value

    @property
    def known_options(self) -> Sequence[str] | None:
        return getattr(self.inner, "known_options", None)

    @known_options.setter
    def known_options(self, value: Sequence[str] | None) -> None:
        self.inner.known_options = value

    @property
    def options(self) -> Mapping[str, Any]:
        return getattr(self.inner, "options", None) or {}

    @options.setter
    def options(self, value: Mapping[str, Any]) -> None:
        self.inner.options = value

    @property
    def notes(self) -> Sequence[str]:
        return getattr(self.inner, "notes", None) or ()

    @notes.setter
    def notes(self, value: Sequence[str]) -> None:
        self.inner.notes = value

    @property
    def official(self) -> bool:
        return bool(getattr(self.inner, "official", True))

    def context_window(self) -> int | None | Awaitable[int | None]:
        window: int | None | Awaitable[int | None] = self._ask("context_window")
        return window

    def takes_images(self) -> bool | None | Awaitable[bool | None]:
        takes: bool | None | Awaitable[bool | None] = self._ask("takes_images")
        return takes

    def max_tokens(self) -> int | None:
        own = getattr(self.inner, "max_tokens", None)
        return own() if callable(own) else super().max_tokens()

    def limited(self, max_tokens: int) -> Provider:
        own = getattr(self.inner, "limited", None)
        return as_provider(own(max_tokens)) if callable(own) else self

    async def aclose(self) -> None:
        own = getattr(self.inner, "aclose", None)
        if own is not None:
            await own()

    def _ask(self, method: str) -> Any:
        own = getattr(self.inner, method, None)
        return own() if callable(own) else None


def as_provider(made: Any) -> Provider:
    """`made` itself when it is a `Provider`, else made one (`Foreign`)."""
    return made if isinstance(made, Provider) else Foreign(made)


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
