"""The session: one conversation with one model, and what a turn needs of it.

The session holds the provider, the toolbox, the commands, the conversations and what it
knows of the model (`agent/model_facts.py`); `Session.turn` runs one turn as a `Turn`
(`agent/turn.py`), which drives the rounds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent import system_prompt
from elelem_kernel.agent.approval import HOW_TO_ALLOW, Approver
from elelem_kernel.agent.blocks import Renderer
from elelem_kernel.agent.budget import Ledger
from elelem_kernel.agent.commands import Commands, add_builtin_commands
from elelem_kernel.agent.context import CHARS_PER_TOKEN
from elelem_kernel.agent.conversation import HISTORY_POLICIES, Conversation
from elelem_kernel.agent.model_facts import ModelFacts
from elelem_kernel.agent.policy import Policy, load
from elelem_kernel.agent.record import CompactionEntry, TurnRecord
from elelem_kernel.agent.registry import ProviderCatalog
from elelem_kernel.agent.toolbox import Tool, Toolbox, check_mode
from elelem_kernel.agent.turn import Turn, TurnResult
from elelem_kernel.errors import ConfigError
from elelem_kernel.events import Provider, Usage
from elelem_kernel.options import from_env
from elelem_kernel.sync import run_sync
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.mcp.attachment import McpTools
    from elelem_kernel.tools.extras import TurnExtras


class Session(ModelFacts):
    """A provider, a toolbox and the conversations of one notebook or terminal."""

    def __init__(
        self,
        provider: Provider,
        toolbox: Toolbox | None = None,
        commands: Commands | None = None,
        *,
        providers: ProviderCatalog | None = None,
        provider_name: str = "custom",
        model: str | None = None,
        mode: str = "build",
        history: str = "replies",
        system_prompt: str | None = None,
        workspace: Path | str | None = None,
        namespace: dict[str, Any] | None = None,
        approver: Approver | None = None,
        allow: tuple[str, ...] | list[str] = (),
        max_rounds: int = 25,
        policy: Policy | None = None,
    ):
        #: The site policy (`agent/policy.py`): what the person's choices are checked against.
        self.policy = policy if policy is not None else load()
        if history not in HISTORY_POLICIES:
            raise ConfigError(f"unknown history policy {history!r}; use replies or full")
        self.provider = provider
        #: Where `set_provider` makes providers by name (the registry, handed in by the
        #: composition root); None: this session keeps the provider it was given.
        self.providers = providers
        self.provider_name = provider_name
        #: The options the person gave each provider (-o, /option), by provider name.
        self.provider_options: dict[str, dict[str, Any]] = {}
        self.model = model if model is not None else getattr(provider, "model", None)
        self.toolbox = toolbox if toolbox is not None else Toolbox()
        self.toolbox.refuse = self.policy.denies
        #: The configured MCP servers' side of this session (the "mcp" setup), or None.
        self.mcp: McpTools | None = None
        if commands is None:
            commands = Commands()
            add_builtin_commands(commands)
        self.commands = commands
        self.mode = mode
        self.history = history
        self.system_prompt = system_prompt
        self.workspace = Path(workspace or Path.cwd()).resolve()
        self.namespace: dict[str, Any] = namespace if namespace is not None else {}
        self.approver = approver
        self.allow = set(allow)
        #: What a declined call tells the person to do (a front sets its own words).
        self.allow_hint = HOW_TO_ALLOW["cli"]
        self.always: set[str] = set()
        self.max_rounds = max_rounds
        self.open_notebook: Path | None = None
        self.propose_cell: Callable[[str], None] = _print_cell
        #: The front's link to the notebook open in the frontend for this turn (the
        #: notebook tools without path act on it), or None.
        self.live_notebook: Any = None
        #: Lines the front adds to the system prompt's environment facts.
        self.environment: list[str] = []
        self.turn_id: str | None = None
        #: Fields the next turn adds to its record (a review's target, its findings); cleared
        #: when the turn ends.
        self.turn_extras: TurnExtras = {}
        self.notice: str | None = None
        self._start_accounts()
        super().__init__()
        self.toolbox.brief = self.small_window  # tools described briefly in a small window

    def _start_accounts(self) -> None:
        """One fresh conversation, nothing spent, no budget but ELELEM_BUDGET's."""
        self.conversation = Conversation()
        self.conversations: dict[str, Conversation] = {self.conversation.id: self.conversation}
        self.usage: Usage = {}
        self.cost: float | None = 0.0
        #: The budgets in force and what they count (`agent/budget.py`).
        self.ledger = Ledger.from_env()
        self.ledger.imposed, self.ledger.imposed_by = self.policy.budgets, self.policy.source
        self.turns = 0
        #: `/compact [what to keep]` asked for: the next turn compacts first ("" no focus).
        self.compact_next: str | None = None

    @property
    def mode(self) -> str:
        """Which kinds of tool are offered (toolbox.MODES); checked on every change."""
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        self.policy.check_mode(check_mode(mode))
        self._mode = mode

    def __repr__(self) -> str:
        return (
            f"<Session provider={self.provider_name} model={self.model} mode={self.mode} "
            f"turns={len(self.conversation)}>"
        )

    # -- conversations -------------------------------------------------------------

    def new_conversation(self) -> Conversation:
        """Start a fresh conversation and make it the active one."""
        self.conversation = Conversation()
        self.conversations[self.conversation.id] = self.conversation
        return self.conversation

    def load(self, conversations: dict[str, list[TurnRecord]], active: str | None) -> None:
        """Replace the conversations with restored records; nothing is executed."""
        self.conversations = {cid: Conversation(cid, turns) for cid, turns in conversations.items()}
        self.ledger.restore(conversations)
        self.restore_calibration(conversations)
        if active in self.conversations:
            self.conversation = self.conversations[active]
        elif self.conversations:
            self.conversation = list(self.conversations.values())[-1]
        else:
            self.new_conversation()

    def messages(
        self, prompt: str, cell: str | None = None, pending: CompactionEntry | None = None
    ) -> list[dict[str, Any]]:
        """What a request for `prompt` (from `cell`) sends: system prompt, history, prompt.

        `pending`: a compaction being made for this request, applied to the history.
        """

        system = system_prompt.build(self.workspace, self.system_prompt, brief=self.small_window())
        if self.environment:
            system += "\n" + "\n".join(self.environment)
        budget = self.window()[0] * CHARS_PER_TOKEN  # compaction comes well before this
        history = self.conversation.messages(self.history, budget, cell, pending)
        return [
            {"role": "system", "content": system},
            *history,
            {"role": "user", "content": prompt},
        ]

    # -- providers and commands -----------------------------------------------------

    @property
    def options(self) -> dict[str, Any]:
        """The options the person gave the current provider (ELELEM_OPTIONS not included)."""
        return self.provider_options.get(self.provider_name, {})

    def set_provider(
        self, name: str, model: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        """Switch provider (and model); the conversation is kept.

        The provider gets ELELEM_OPTIONS, then `options` (default: the ones it had before
        in this session), then the options the site policy fixes; nothing changes when the
        provider refuses them or the policy does not allow it.
        """
        chosen = dict(self.provider_options.get(name, {}) if options is None else options)
        if self.providers is None:
            raise ConfigError(
                f"cannot switch to {name!r}: this session was made without a registry"
            )
        chosen = self.policy.options_for(name, chosen, from_env())  # the session reads some
        self.provider = self.policy.make_provider(self.providers, name, model, chosen)
        self.provider_name = name
        self.provider_options[name] = chosen
        self.model = model if model is not None else getattr(self.provider, "model", None)

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

    @contextmanager
    def overridden(
        self,
        *,
        mode: str | None = None,
        tools: Iterable[Tool] | None = None,
        provider: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> Iterator[Session]:
        """For the `with` block only: another mode, provider or model (with `options` on top
        of the ones it has), system prompt, or tools.

        Everything is put back on the way out, after an error or an interrupt too: the
        provider, its options, model, mode and system prompt as they were, the `tools`
        removed and any tool of the same name they replaced restored. The conversation is
        kept.
        """
        saved = (self.provider, self.provider_name, self.model, self.mode, self.system_prompt)
        saved_options = {k: dict(v) for k, v in self.provider_options.items()}
        added = list(tools or ())
        box = self.toolbox
        replaced = [box.tools[t.name] for t in added if t.name in box.tools]
        try:
            if provider or model or options:
                name = provider or self.provider_name
                if model is None and not provider:
                    model = self.model
                merged = {**self.provider_options.get(name, {}), **(options or {})}
                self.set_provider(name, model, merged)
            if mode:
                self.mode = mode
            if system_prompt is not None:
                self.system_prompt = system_prompt
            for tool in added:
                box.put(tool)
            yield self
        finally:
            self.provider, self.provider_name, self.model, self.mode, self.system_prompt = saved
            self.provider_options = saved_options
            for tool in added:
                box.remove(tool.name)
            for tool in replaced:
                box.put(tool)

    def command(self, line: str) -> str:
        """Run a slash command line and return its Markdown answer."""
        return self.commands.run(self, line)

    # -- the turn ---------------------------------------------------------------------

    def run(
        self,
        prompt: str,
        renderer: Renderer | None = None,
        cell: str | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> TurnResult:
        """Run a turn to the end from synchronous code; Ctrl-C ends it as interrupted.

        With no `loop` a private one is made and closed after the provider's connections.
        Works inside a running event loop too (sync.py).
        """
        return run_sync(
            lambda: self.turn(prompt, renderer=renderer, cell=cell),
            loop=loop,
            close=self.aclose,
            interrupt="result",
        )

    async def aclose(self) -> None:
        """Close the provider's connections (call it on the loop that opened them)."""
        aclose = getattr(self.provider, "aclose", None)
        if aclose is not None:
            await aclose()

    def close(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the provider's connections on `loop` (the one that opened them), then it."""
        try:
            loop.run_until_complete(self.aclose())
        finally:
            loop.close()

    async def turn(
        self, prompt: str, renderer: Renderer | None = None, cell: str | None = None
    ) -> TurnResult:
        """Run one turn for `prompt`; returns normally on errors and on cancellation."""
        return await Turn(self, prompt, renderer, cell).run()


def _print_cell(source: str) -> None:
    """`propose_cell` where no front offers a cell: print it, control characters shown."""

    print(visible(source))
