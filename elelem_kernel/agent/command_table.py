"""The slash-command table, and what a command may read of the session it runs on.

`Commands` keeps a session's commands by name; a command is `fn(session, args) -> str`
(Markdown). `CommandSession` is the part of a `Session` a command sees: the table and the
built-ins (`agent/commands.py`) name it rather than the session, so the session can hold
its table without a cycle of imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from elelem_kernel.errors import ElelemError

if TYPE_CHECKING:
    from elelem_kernel.agent.accounts import Accounts
    from elelem_kernel.agent.approval import Grants
    from elelem_kernel.agent.conversation import Conversation, Conversations
    from elelem_kernel.agent.model_facts import ModelFacts
    from elelem_kernel.agent.policy import Policy
    from elelem_kernel.agent.toolbox import Toolbox
    from elelem_kernel.events import Message, Provider
    from elelem_kernel.mcp.attachment import McpTools


class CommandSession(Protocol):
    """What a slash command reads and changes of its session (a `Session` is one)."""

    policy: Policy
    facts: ModelFacts
    toolbox: Toolbox
    commands: Commands[Any]
    mcp: McpTools | None
    grants: Grants
    accounts: Accounts
    conversations: Conversations

    @property
    def provider(self) -> Provider:
        """The provider the turns are sent to."""

    @property
    def provider_name(self) -> str:
        """Its name in the registry."""

    @property
    def model(self) -> str | None:
        """The model asked for, or None (the provider's default)."""

    @property
    def mode(self) -> str:
        """Which kinds of tool are offered."""

    @property
    def workspace(self) -> Path:
        """The workspace root."""

    @property
    def conversation(self) -> Conversation:
        """The active conversation."""

    def set_mode(self, mode: str) -> None:
        """Offer the tools of `mode` (checked against the site policy)."""

    def set_provider(
        self, name: str, model: str | None = None, options: Mapping[str, object] | None = None
    ) -> None:
        """Switch provider (and model)."""

    def messages(self, prompt: str) -> list[Message]:
        """What a request for `prompt` would send."""


#: The session type a table's commands take: a `Session`, or any `CommandSession`.
S = TypeVar("S", bound=CommandSession)


@dataclass
class Command(Generic[S]):
    name: str
    description: str
    fn: Callable[[S, str], str]
    complete: Callable[[S, str], list[str]] | None = None
    usage: str = ""


class Commands(Generic[S]):
    """The slash commands of a session, by name (`Commands[Session]`: each is given the
    session it runs on)."""

    def __init__(self) -> None:
        self.commands: dict[str, Command[S]] = {}
        #: Lines a front adds under the `/help` table (how to type a multi-line prompt).
        self.notes: list[str] = []

    def add(
        self,
        name: str,
        description: str,
        fn: Callable[[S, str], str],
        complete: Callable[[S, str], list[str]] | None = None,
        usage: str = "",
    ) -> None:
        """Register `/name`; adding a name again replaces it."""
        name = name.lstrip("/")
        self.commands[name] = Command(name, description, fn, complete, usage or f"/{name}")

    def names(self) -> list[str]:
        return sorted(self.commands)

    def run(self, session: S, line: str) -> str:
        """Run a `/name args` line and return what it says; unknown names list the commands."""
        name, _, args = line.strip().lstrip("/").partition(" ")
        command = self.commands.get(name)
        if command is None:
            known = ", ".join(f"/{n}" for n in self.names())
            return f"Unknown command `/{name}`. Commands: {known}"
        try:
            return command.fn(session, args.strip())
        except ElelemError as e:  # BadInput, or a setting it cannot apply
            return f"`/{name}`: {e}\n\nUsage: `{command.usage}`"

    def complete(self, session: S, text: str) -> list[str]:
        """Completions for a partial `/command args` line."""
        text = text.lstrip()
        if not text.startswith("/"):
            return []
        name, space, args = text[1:].partition(" ")
        if not space:
            return [f"/{n}" for n in self.names() if n.startswith(name)]
        command = self.commands.get(name)
        if command is None or command.complete is None:
            return []
        return [f"/{name} {c}" for c in command.complete(session, args) if c.startswith(args)]
