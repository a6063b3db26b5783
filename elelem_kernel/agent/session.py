"""The session: one conversation with one model, and what a turn needs of it.

The session holds its model (`facts`, `agent/model_facts.py`), the toolbox, the commands,
the conversations, its spending (`accounts`), the tools granted and the tools' context;
`Session.turn` runs one turn as a `Turn` (`agent/turn.py`), which drives the rounds with
the settings its front brings (`agent/front.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.agent import system_prompt
from elelem_kernel.agent.accounts import Accounts
from elelem_kernel.agent.approval import Approver, Grants
from elelem_kernel.agent.blocks import Renderer
from elelem_kernel.agent.budget import Ledger
from elelem_kernel.agent.command_table import Commands
from elelem_kernel.agent.commands import add_builtin_commands
from elelem_kernel.agent.context import CHARS_PER_TOKEN
from elelem_kernel.agent.conversation import Conversation, Conversations
from elelem_kernel.agent.front import Front, PlainFront, TurnSettings
from elelem_kernel.agent.model_facts import ModelFacts
from elelem_kernel.agent.policy import Policy, load
from elelem_kernel.agent.record import CompactionEntry, TurnRecord
from elelem_kernel.agent.toolbox import Tool, Toolbox, check_mode
from elelem_kernel.agent.toolset import Tools
from elelem_kernel.agent.turn import Turn, TurnResult
from elelem_kernel.events import Message, Provider, UserMessage
from elelem_kernel.sync import run_sync
from elelem_kernel.tools.declaration import ToolContext

if TYPE_CHECKING:
    from elelem_kernel.agent.catalog import ProviderCatalog
    from elelem_kernel.images import ImageEntry
    from elelem_kernel.mcp.attachment import McpTools


class Session:
    """A provider, a toolbox and the conversations of one notebook or terminal.

    Made whole by its maker (`assembly/sessions.py`, or a test) and not patched after:
    what a front changes from turn to turn comes with the turn (`front.TurnSettings`).
    """

    def __init__(
        self,
        provider: Provider,
        toolbox: Toolbox | None = None,
        commands: Commands[Session] | None = None,
        *,
        providers: ProviderCatalog | None = None,
        provider_name: str = "custom",
        model: str | None = None,
        mode: str = "build",
        history: str = "replies",
        system_prompt: str | None = None,
        workspace: Path | str | None = None,
        namespace: dict[str, object] | None = None,
        approver: Approver | None = None,
        allow: Iterable[str] = (),
        max_rounds: int = 25,
        policy: Policy | None = None,
        front: Front | None = None,
    ):
        """`front`: how cells are offered, which notebook is open, the settings of a turn
        given none (`agent/front.py`); without one, a `PlainFront` whose turns are approved
        by `approver`."""
        #: The site policy (`agent/policy.py`): what the person's choices are checked against.
        self.policy = policy if policy is not None else load()
        #: The conversations, the active one, and how the earlier turns are sent.
        self.conversations = Conversations(history)
        #: The provider, its model and options, and what is known of them.
        self.facts = ModelFacts(
            provider,
            providers=providers,
            provider_name=provider_name,
            model=model,
            policy=self.policy,
            conversations=self.conversations,
        )
        self.toolbox = toolbox if toolbox is not None else Toolbox()
        self.toolbox.refuse = self.policy.denies
        #: The configured MCP servers' side of this session (the "mcp" setup), or None.
        self.mcp: McpTools | None = None
        if commands is None:
            commands = Commands[Session]()
            add_builtin_commands(commands)
        self.commands = commands
        self.set_mode(mode)
        self.system_prompt = system_prompt
        #: The tools that run without asking (by name, or answered "always").
        self.grants = Grants(set(allow))
        self._front: Front = front if front is not None else PlainFront(TurnSettings(approver))
        #: What the workspace tools read: the workspace, the namespace, the open notebook
        #: and the running turn's fields (`tools/declaration.py`).
        self.tool_context = self._new_tool_context(workspace, namespace)
        self.max_rounds = max_rounds
        #: What the session spent, and the budgets in force (`agent/budget.py`).
        self.accounts = self._new_accounts()
        self.toolbox.brief = self.facts.small_window  # tools described briefly in a small window

    def _new_tool_context(
        self, workspace: Path | str | None, namespace: dict[str, object] | None
    ) -> ToolContext:
        """The tools' view of this session: the workspace (default: here), the namespace,
        and what the front says of the open notebook and of proposing a cell."""
        return ToolContext(
            Path(workspace or Path.cwd()).resolve(),
            namespace if namespace is not None else {},
            open_notebook=self._front.open_notebook(),
            propose_cell=self._front.propose_cell,
            unasked=self._unasked,
        )

    def _new_accounts(self) -> Accounts:
        """Nothing spent; the budgets of ELELEM_BUDGET and the site policy, raised as the
        front says (each turn's settings may say so again)."""
        ledger = Ledger.from_env()
        ledger.imposed, ledger.imposed_by = self.policy.budgets, self.policy.source
        ledger.hint = self._front.turn_settings().budget_hint
        return Accounts(ledger)

    @property
    def mode(self) -> str:
        """Which kinds of tool are offered (toolbox.MODES)."""
        return self._mode

    def set_mode(self, mode: str) -> None:
        """Offer the tools of `mode`; ConfigError for an unknown one or one the policy denies."""
        self.policy.check_mode(check_mode(mode))
        self._mode = mode

    @property
    def provider(self) -> Provider:
        """The provider the turns are sent to (`facts.set_provider` switches it)."""
        return self.facts.provider

    @property
    def provider_name(self) -> str:
        """The provider's name in the registry (`custom` for one handed in)."""
        return self.facts.provider_name

    @property
    def model(self) -> str | None:
        """The model asked for, or None (the provider's default)."""
        return self.facts.model

    def set_provider(
        self, name: str, model: str | None = None, options: Mapping[str, object] | None = None
    ) -> None:
        """Switch provider (and model); the conversation is kept (`ModelFacts.set_provider`)."""
        self.facts.set_provider(name, model, options)

    @property
    def workspace(self) -> Path:
        """The workspace root the tools work in."""
        return self.tool_context.workspace

    @property
    def conversation(self) -> Conversation:
        """The active conversation."""
        return self.conversations.active

    def _unasked(self, tool: str) -> bool:
        """Whether `tool` runs without asking: the auto mode, or granted by name."""
        return self.mode == "auto" or tool in self.grants.names()

    def __repr__(self) -> str:
        return (
            f"<Session provider={self.provider_name} model={self.model} mode={self.mode} "
            f"turns={len(self.conversation)}>"
        )

    # -- conversations -------------------------------------------------------------

    def load(self, conversations: dict[str, list[TurnRecord]], active: str | None) -> None:
        """Replace the conversations with restored records, with what they spent and their
        calibration; nothing is executed."""
        self.conversations.load(conversations, active)
        self.accounts.ledger.restore(conversations)
        self.facts.restore_calibration(conversations)

    def messages(
        self,
        prompt: str,
        cell: str | None = None,
        pending: CompactionEntry | None = None,
        images: list[ImageEntry] | None = None,
        environment: Iterable[str] = (),
    ) -> list[Message]:
        """What a request for `prompt` (from `cell`) sends: system prompt, history, prompt.

        `pending`: a compaction being made for this request, applied to the history;
        `images`: the prompt's own images (`_images` entries, fitted), sent with it;
        `environment`: the turn's lines for the system prompt's environment facts.
        """
        brief = self.facts.small_window()
        system = system_prompt.build(self.workspace, self.system_prompt, brief=brief)
        if lines := list(environment):
            system += "\n" + "\n".join(lines)
        budget = self.facts.window()[0] * CHARS_PER_TOKEN  # compaction comes well before this
        history = self.conversation.messages(self.conversations.history, budget, cell, pending)
        asked: UserMessage = {"role": "user", "content": prompt}
        if images:
            asked["images"] = [dict(image) for image in images]
        return [{"role": "system", "content": system}, *history, asked]

    # -- for a while, and commands -------------------------------------------------

    @contextmanager
    def overridden(
        self,
        *,
        mode: str | None = None,
        tools: Iterable[Tool] | None = None,
        provider: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        options: Mapping[str, object] | None = None,
    ) -> Iterator[Session]:
        """For the `with` block only: another mode, provider or model (with `options` on top
        of the ones it has), system prompt, or tools.

        Everything is put back on the way out, after an error or an interrupt too: the
        provider, its options, model, mode and system prompt as they were, the `tools`
        removed and any tool of the same name they replaced restored. The conversation is
        kept.
        """
        facts = self.facts
        saved = (facts.provider, facts.provider_name, facts.model, self.mode, self.system_prompt)
        saved_options = {k: dict(v) for k, v in facts.provider_options.items()}
        added = self.toolbox.add_toolset(Tools("overridden", tools or ()))
        try:
            if provider or model or options:
                name = provider or self.provider_name
                if model is None and not provider:
                    model = self.model
                merged = {**facts.provider_options.get(name, {}), **(options or {})}
                facts.set_provider(name, model, merged, reuse=True)  # as the last cell's
            if mode:
                self.set_mode(mode)
            if system_prompt is not None:
                self.system_prompt = system_prompt
            yield self
        finally:
            facts.provider, facts.provider_name, facts.model, self._mode, self.system_prompt = saved
            facts.provider_options = saved_options
            self.toolbox.remove_toolset(added)

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
        settings: TurnSettings | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> TurnResult:
        """Run a turn to the end from synchronous code; Ctrl-C ends it as interrupted.

        With no `loop` a private one is made and closed after the provider's connections.
        Works inside a running event loop too (sync.py).
        """
        return run_sync(
            lambda: self.turn(prompt, renderer, cell, settings, extras),
            loop=loop,
            close=self.facts.aclose,
            interrupt="result",
        )

    async def turn(
        self,
        prompt: str,
        renderer: Renderer | None = None,
        cell: str | None = None,
        settings: TurnSettings | None = None,
        extras: Mapping[str, object] | None = None,
        images: list[ImageEntry] | None = None,
    ) -> TurnResult:
        """Run one turn for `prompt`; returns normally on errors and on cancellation.

        `settings`: what the front brings to this turn (default: the front's own);
        `extras`: fields its record gets (a review's target); `images`: the prompt's own
        (fitted `_images` entries: an ACP client's pasted screenshot)."""
        chosen = settings if settings is not None else self._front.turn_settings()
        return await Turn(self, prompt, renderer, cell, chosen, extras, images).run()
