"""The session's model: the provider it talks to, and what it knows of it (context window,
request sizes, images, price name).

`Session.facts`. Switching provider or model goes through the site policy. The window and
the image support are asked of the provider once per provider; a turn's `-p NAME` made
again with the same model, options, environment and factory gets back the provider it had,
with its connections and its probed window (`reuse`); a window a server states when it
refuses a request is remembered; the server's count of a request's input tokens
calibrates the estimates of that conversation (`agent/context.py` says where each number
comes from).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent import media, pricing
from elelem_kernel.agent.context import (
    BRIEF_BELOW,
    CALIBRATION_RANGE,
    calibration,
    estimate,
    known,
    resolve_window,
    window_named,
)
from elelem_kernel.errors import ConfigError, ContextOverflow
from elelem_kernel.events import Message, Provider, Usage, as_provider
from elelem_kernel.options import from_env
from elelem_kernel.sync import resolve

if TYPE_CHECKING:
    from elelem_kernel.agent.catalog import ProviderCatalog
    from elelem_kernel.agent.conversation import Conversation, Conversations
    from elelem_kernel.agent.policy import Policy
    from elelem_kernel.agent.record import Meter, TurnRecord


#: What a provider was made of: its model, its options, the environment then, its factory.
Made = tuple[str | None, dict[str, object], dict[str, str], object]


class ModelFacts:
    """The provider, its model and options, and the session's knowledge of them, kept per
    provider (`Session.facts`)."""

    def __init__(
        self,
        provider: Provider,
        *,
        providers: ProviderCatalog | None,
        provider_name: str,
        model: str | None,
        policy: Policy,
        conversations: Conversations,
    ) -> None:
        self.provider = as_provider(provider)
        #: Where `set_provider` makes providers by name (the registry, handed in by the
        #: composition root); None: the session keeps the provider it was given.
        self.providers = providers
        self.provider_name = provider_name
        self.model = model if model is not None else self.provider.model
        #: The options the person gave each provider (-o, /option), by provider name.
        self.provider_options: dict[str, dict[str, object]] = {}
        #: The last provider made of each name, with what it was made of (`Made`):
        #: `set_provider(reuse=True)` gives it back while that is the same.
        self._made: dict[str, tuple[Made, Provider]] = {}
        self._policy = policy
        self._conversations = conversations
        #: The window set with `/context-window` (tokens); None: see `agent/context.py`.
        self.context_window: int | None = None
        self._probed: tuple[Any, int | None] | None = None
        #: The question for the window under way (`ask_window_ahead`), by provider.
        self._asked: tuple[Provider, asyncio.Future[object]] | None = None
        #: The window a server stated when it refused a request as too big, by provider.
        self._learned: tuple[Any, int] | None = None
        #: The server's count / the estimate, by conversation id (`context.calibration`).
        self.calibration: dict[str, float] = {}
        self._vision: tuple[Any, bool] | None = None  # what the provider said, per provider
        self._raw = 0  # the uncalibrated estimate of the last request sent
        #: Notes from the server not yet said (`take_notes`).
        self.model_notes: list[str] = []

    @property
    def conversation(self) -> Conversation:
        """The active conversation, whose estimates are calibrated."""
        return self._conversations.active

    @property
    def options(self) -> dict[str, object]:
        """The options the person gave the current provider (ELELEM_OPTIONS not included)."""
        return self.provider_options.get(self.provider_name, {})

    def set_provider(
        self,
        name: str,
        model: str | None = None,
        options: Mapping[str, object] | None = None,
        *,
        reuse: bool = False,
    ) -> None:
        """Switch provider (and model); the conversation is kept.

        The provider gets ELELEM_OPTIONS, then `options` (default: the ones it had before
        in this session), then the options the site policy fixes; nothing changes when the
        provider refuses them or the policy does not allow it. `reuse` (a turn's `-p`): the
        provider made last of this name when the model, options, environment and factory
        are the same, so a cell's `-p openai` neither makes a provider (a client) nor asks
        the server its window again at every turn.
        """
        chosen = dict(self.provider_options.get(name, {}) if options is None else options)
        if self.providers is None:
            raise ConfigError(
                f"cannot switch to {name!r}: this session was made without a registry"
            )
        chosen = self._policy.options_for(name, chosen, from_env())  # the session reads some
        # a provider reads its key and URL in the environment; its factory may be replaced
        made: Made = (model, chosen, dict(os.environ), self.providers.provider_factory(name))
        kept = self._made.get(name)
        if reuse and kept is not None and kept[0] == made:
            self.provider = kept[1]
        else:
            self.provider = self._policy.make_provider(self.providers, name, model, chosen)
            self._made[name] = (made, self.provider)
        self.provider_name = name
        self.provider_options[name] = chosen
        self.model = model if model is not None else self.provider.model

    def set_option(self, name: str, value: Any = None) -> None:
        """Set option `name` of the current provider (None: back to its default)."""
        chosen = dict(self.options)
        if value is None:
            chosen.pop(name, None)
        else:
            chosen[name] = value
        self.set_provider(self.provider_name, self.model, chosen)

    def provider_names(self) -> list[str]:
        """The providers `set_provider` can switch to."""
        return self.providers.provider_names() if self.providers else [self.provider_name]

    async def aclose(self) -> None:
        """Close the provider's connections (call it on the loop that opened them)."""
        await self.provider.aclose()

    def window(self) -> tuple[int, str]:
        """The model's context window in tokens, and where that number comes from."""

        reported = self._probed[1] if self._probed and self._probed[0] is self.provider else None
        learned = self._learned[1] if self._learned and self._learned[0] is self.provider else None
        return resolve_window(
            override=self.context_window,
            options=self._options(),
            provider_name=self.provider_name,
            model=self.model,
            reported=reported,
            learned=learned,
            official=self.official,
        )

    def known_window(self) -> int | None:
        """The window when something says how big it is; None when it is only assumed."""
        window, source = self.window()
        return window if known(source) else None

    def small_window(self) -> bool:
        """Whether the window is known to be under `BRIEF_BELOW` tokens: the system prompt
        and the tool descriptions are then sent in their brief forms."""
        window, source = self.window()
        return known(source) and window < BRIEF_BELOW

    @property
    def official(self) -> bool:
        """Whether the provider talks to its vendor's own endpoint, where a model's name
        has a known window and price (providers that do not say are taken at their word)."""
        return self.provider.official

    def price_model(self) -> str | None:
        """The model name to price (`agent/pricing.py`): None away from the official
        endpoint, where a name such as `gpt-4.1` says nothing about what it costs."""
        return self.model if self.official else None

    def pricing(self) -> tuple[pricing.Row | None, str]:
        """The prices of the model and where they come from (`pricing.PRICED_BY`): the
        person's option `price`, else free for offline providers, else the known table for
        the official endpoint's model; (None, "unknown") when none says."""
        chosen = self._options().get(pricing.OPTION)
        if chosen is not None:
            return pricing.parse_price(chosen), "option"
        if self.provider_name in pricing.FREE_PROVIDERS:
            return (0.0, 0.0, 0.0, 0.0), "free"
        row = pricing.price(self.price_model())
        return (row, "table") if row is not None else (None, "unknown")

    def priced(self, usage: Usage) -> float | None:
        """Dollars for `usage` at the model's prices (`pricing()`); None when unknown."""
        row, _source = self.pricing()
        return None if row is None else pricing.cost_at(row, usage)

    def estimate(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, object]] | None = None
    ) -> int:
        """The estimated tokens of a request, scaled by what the server counted for this
        conversation's earlier requests."""
        factor = self.calibration.get(self.conversation.id, 1.0)
        return int(estimate(messages, tools) * factor + 0.5)

    def measure(self, messages: Sequence[Message], tools: Sequence[Mapping[str, object]]) -> Meter:
        """The context meter of a request about to be sent: its estimated tokens and the
        window (`assumed` when no source names it)."""
        self._raw = estimate(messages, tools)
        window, source = self.window()
        used = int(self._raw * self.calibration.get(self.conversation.id, 1.0) + 0.5)
        meter: Meter = {"used": used, "window": window, "estimated": True}  # one estimate, not two
        if not known(source):
            meter["assumed"] = True
        return meter

    def calibrate(self, reported: int) -> None:
        """The server counted `reported` input tokens for the last request sent: scale this
        conversation's later estimates by it (the turn's record keeps the factor)."""
        factor = calibration(reported, self._raw)
        if factor is not None:
            self.calibration[self.conversation.id] = factor

    def restore_calibration(self, conversations: dict[str, list[TurnRecord]]) -> None:
        """Each restored conversation's factor: the newest its records kept (their
        `calibration`), so its estimates stay calibrated from one run to the next."""
        low, high = CALIBRATION_RANGE
        for cid, turns in conversations.items():
            for record in reversed(turns):
                factor = record.get("calibration") if isinstance(record, dict) else None
                if isinstance(factor, (int, float)) and not isinstance(factor, bool):
                    if low <= factor <= high:
                        self.calibration[cid] = float(factor)
                        break

    def learn(self, error: ContextOverflow) -> None:
        """Learn from a server's context-overflow refusal: the window it stated, and its
        count of the request for this conversation's estimates."""
        if error.limit:
            self._learned = (self.provider, error.limit)
        if error.requested:
            self.calibrate(error.requested)

    async def probe_window(self) -> int:
        """The window; asks the provider for its own (once per provider) when no setting
        names one: a local server's window is only known by asking it. A question already
        under way (`ask_window_ahead`) is awaited, not asked again."""
        if self._must_ask():
            value = await self._asking()
            self._probed = (self.provider, value if isinstance(value, int) and value > 0 else None)
            self.model_notes += [n for n in self.provider.notes if isinstance(n, str)]
        return self.window()[0]

    def ask_window_ahead(self) -> None:
        """Start asking the provider for its window now, on the running loop, if a turn
        will: a front calls it as a turn begins, so the server's answer comes while the
        front draws the turn's view instead of after."""
        if self._must_ask():
            self._asking()

    def _must_ask(self) -> bool:
        named = self.context_window or window_named(self._options())
        return not named and not (self._probed and self._probed[0] is self.provider)

    def _asking(self) -> asyncio.Future[object]:
        """The question to the current provider for its window, started once per provider
        and loop (again if it was cancelled with the turn that awaited it)."""
        loop = asyncio.get_running_loop()
        if self._asked is not None:
            provider, task = self._asked
            if provider is self.provider and task.get_loop() is loop and not task.cancelled():
                return task
        task = asyncio.ensure_future(_ask(self.provider.context_window))
        self._asked = (self.provider, task)
        return task

    def take_notes(self) -> list[str]:
        """What the server said of itself that the person should know, each said once."""
        notes, self.model_notes = self.model_notes, []
        return notes

    async def takes_images(self) -> bool:
        """Whether the model is sent images: the option `vision` (`-o vision=off`), else
        what the provider says (`takes_images()`: Ollama's capabilities, llm's attachment
        types; asked once per provider), else the models known to (`media.known_vision`)."""
        chosen = self._options().get(media.OPTION)
        if chosen is not None:
            return media.parse_vision(chosen)
        if self._vision is not None and self._vision[0] is self.provider:
            return self._vision[1]
        answer = await _ask(self.provider.takes_images)
        if not isinstance(answer, bool):
            answer = media.known_vision(self.provider_name, self.model)
        self._vision = (self.provider, answer)
        return answer

    def _options(self) -> dict[str, object]:
        """ELELEM_OPTIONS under the options the person gave the current provider."""
        return {**from_env(), **self.provider_options.get(self.provider_name, {})}


async def _ask(probe: Callable[[], object]) -> Any:
    """What a question to the provider (`context_window`, `takes_images`: sync or async)
    answers; None when it fails (a question about the model must never end a turn)."""
    try:
        return await resolve(probe())
    except Exception:
        return None
