"""What a session has spent: its turns, their tokens and dollars, and its budgets.

One object the turn settles into when it ends (`Accounts.settle`), so `/usage`, `/budget`
and the fronts' footers read one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from elelem_kernel.agent.budget import Ledger
from elelem_kernel.agent.record import add_usage


@dataclass
class Accounts:
    """The session's spending: turns run, tokens by kind, dollars (None once a turn's
    price was unknown), and the budgets in force (`agent/budget.py`)."""

    ledger: Ledger
    usage: dict[str, int] = field(default_factory=dict)
    cost: float | None = 0.0
    turns: int = 0

    def add(self, record: dict[str, Any], counted: bool = True) -> None:
        """Add a finished turn's record (`counted`: a turn of the conversation, not an
        empty prompt) to the session's totals."""
        if counted:
            self.turns += 1
        add_usage(self.usage, record["usage"])
        if self.cost is not None:
            self.cost = None if record["cost"] is None else self.cost + record["cost"]
