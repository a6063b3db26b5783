"""What a front hands the session: the `Front` it is built with, and each turn's settings.

A front (the terminal, the kernel, the magic, the ACP agent, a review run) gives the
composition root (`assembly/sessions.py`) its `Front`: how it offers a cell, which
notebook is open in it, how it tells the person something. What changes from one turn to
the next (who approves its calls, the words that say how to allow a call or raise a
budget, the facts of its environment, the link to the open notebook) is a turn's
`TurnSettings`, handed to `Session.turn` and never set on the session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from elelem_kernel.agent.approval import HOW_TO_ALLOW, Approver
from elelem_kernel.agent.budget import DEFAULT_HINT
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.tools.notebook_live import Link


@dataclass(frozen=True)
class TurnSettings:
    """What one turn brings from its front."""

    #: Who is asked before a write or execute call runs; None: nobody can be asked.
    approver: Approver | None = None
    #: How a declined call is allowed, in the front's words (`approval.HOW_TO_ALLOW`).
    allow_hint: str = HOW_TO_ALLOW["cli"]
    #: How a budget is raised, in the front's words (`budget.DEFAULT_HINT`).
    budget_hint: str = DEFAULT_HINT
    #: Lines the system prompt's environment facts get for this turn.
    environment: tuple[str, ...] = ()
    #: The front's link to the notebook open in it, for the notebook tools without a path.
    live_notebook: Link | None = None


class Front(Protocol):
    """What a front hands the composition root when it asks for a session."""

    def propose_cell(self, source: str) -> None:
        """Offer `source` as a new cell (or print it where there are no cells)."""

    def open_notebook(self) -> Path | None:
        """The notebook open in the front (written only through it), or None."""

    def notice(self, text: str) -> None:
        """Tell the person something about the session being made (its default provider)."""

    def turn_settings(self) -> TurnSettings:
        """The settings of a turn its caller gives none (`Session.run(prompt)`)."""


@dataclass
class PlainFront:
    """A front without cells or notebooks: a script, a test, the terminal, an ACP client.
    Every turn gets `settings`; a proposed cell goes to `propose` (default: printed,
    control characters shown), a notice to `tell` (default: kept in `notices`)."""

    settings: TurnSettings = TurnSettings()
    notices: list[str] = field(default_factory=list)
    propose: Callable[[str], None] | None = None
    tell: Callable[[str], None] | None = None

    def propose_cell(self, source: str) -> None:
        if self.propose is not None:
            self.propose(source)
        else:
            print(visible(source))

    def open_notebook(self) -> Path | None:
        return None

    def notice(self, text: str) -> None:
        if self.tell is not None:
            self.tell(text)
        else:
            self.notices.append(text)

    def turn_settings(self) -> TurnSettings:
        return self.settings
