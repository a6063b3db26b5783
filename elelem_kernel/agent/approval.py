"""Approval of write and execute calls: who says yes, and how.

The session asks an `Approver` before it runs a write or execute tool, unless the mode is
`auto` or the person already said "always" for that tool in this session. A sensitive call
(`request.sensitive`: a write into a plugin or MCP config) is asked every time but in
`auto`, and only a person can allow it: a `Policy` denies it. Channels (a
terminal prompt, buttons in a notebook card, `input()` over stdin, a policy for headless
runs) all implement the same one-method interface.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Decision = Literal["allow", "deny", "always"]
DECISIONS = ("allow", "deny", "always")
#: The words a person may answer with, on every channel (terminal, stdin, notebook input).
ANSWERS: dict[str, Decision] = {
    "y": "allow",
    "yes": "allow",
    "ok": "allow",
    "allow": "allow",
    "n": "deny",
    "no": "deny",
    "deny": "deny",
    "a": "always",
    "always": "always",
}


def decision_for(text: str | None) -> Decision | None:
    """The decision a typed answer means (case and spaces ignored), or None when unclear."""
    return ANSWERS.get((text or "").strip().lower())


SENSITIVE_DECLINED = (
    "not run: {why}. Such a write needs the person's yes for this very call ('always', "
    "allowing the tool by name and --yes do not cover it), or the auto mode."
)

NO_CHANNEL = (
    "not run: approval is needed for {kind} tools and there is no way to ask the person here. {how}"
)

#: How to allow a declined call, in the words that work in each front (`Session.allow_hint`).
HOW_TO_ALLOW = {
    "cli": "Rerun with --allow {name}, --yes or --mode auto.",
    "magic": (
        "Allow it with `%%elelem --allow {name}` (this cell), `%elelem /allow {name}` (the "
        "session) or `%%elelem --mode auto`; for a headless run (nbclient, papermill, "
        "jupyter execute) set ELELEM_ALLOW={name} or ELELEM_MODE=auto in the kernel's "
        "environment."
    ),
    "kernel": (
        "Allow it with `/allow {name}` or `/mode auto` in a cell before this one; for a "
        "headless run (nbclient, papermill, jupyter execute) set ELELEM_ALLOW={name} or "
        "ELELEM_MODE=auto in the kernel's environment."
    ),
}


@dataclass
class ApprovalRequest:
    """One call waiting for a yes: what it is and exactly what it will do."""

    id: str
    name: str
    kind: str
    arguments: dict[str, Any]
    preview: str
    index: int | None = None  #: block index of the call's tool_use card, for live views
    #: why this call is asked every time (a write that can run code), or None
    sensitive: str | None = None


class Approver(Protocol):
    """Answers `allow`, `deny` or `always` (allow this tool for the rest of the session)."""

    def approve(self, request: ApprovalRequest) -> Decision | Awaitable[Decision]: ...


class Policy:
    """A fixed answer for headless runs: allow named tools (or all with `yes`), deny the rest."""

    def __init__(self, allow: Iterable[str] = (), yes: bool = False):
        self.allow = set(allow)
        self.yes = yes

    def approve(self, request: ApprovalRequest) -> Decision:
        if request.sensitive:
            return "deny"
        return "allow" if self.yes or request.name in self.allow else "deny"

    def __repr__(self) -> str:
        return f"Policy(allow={sorted(self.allow)!r}, yes={self.yes})"
