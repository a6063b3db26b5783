"""What a session has spent: its turns, their tokens and dollars, and its budgets.

One object the turn settles into when it ends (`Accounts.settle`), so `/usage`, `/budget`
and the fronts' footers read one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from elelem_kernel.agent.budget import Ledger
from elelem_kernel.agent.record import TurnRecord, add_usage
from elelem_kernel.events import Usage


@dataclass
class Accounts:
    """The session's spending: turns run, tokens by kind, dollars (None once a turn's
    price was unknown), and the budgets in force (`agent/budget.py`)."""

    ledger: Ledger
    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0
    turns: int = 0

    def add(self, record: TurnRecord, counted: bool = True) -> None:
        """Add a finished turn's record (`counted`: a turn of the conversation, not an
        empty prompt) to the session's totals."""
        if counted:
            self.turns += 1
        add_usage(self.usage, record["usage"])
        if self.cost is not None:
            self.cost = None if record["cost"] is None else self.cost + record["cost"]
