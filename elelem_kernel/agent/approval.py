"""Approval of write and execute calls: who says yes, and how.

The session asks an `Approver` before it runs a write or execute tool, unless the mode is
`auto` or the tool is allowed by name (`allowed`: --allow, ELELEM_ALLOW, /allow, or the
person already said "always" for it in this session); `decide` is that decision. A sensitive call
(`request.sensitive`: a write into a plugin or MCP config) is asked every time but in
`auto`, and only a person can allow it: a `Policy` denies it. Channels (a
terminal prompt, buttons in a notebook card, `input()` over stdin, a policy for headless
runs) all implement the same one-method interface.
"""

from __future__ import annotations

from collections.abc import Awaitable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from elelem_kernel.agent.blocks import CallState, Renderer
from elelem_kernel.agent.toolbox import Call, Tool
from elelem_kernel.sync import call_off_loop

if TYPE_CHECKING:
    from elelem_kernel.agent.policy import Policy as SitePolicy
    from elelem_kernel.tools.declaration import Arguments

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

#: How to allow a declined call, in the words that work in each front (`TurnSettings.allow_hint`).
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
    arguments: Arguments
    preview: str
    index: int | None = None  #: block index of the call's tool_use card, for live views
    #: why this call is asked every time (a write that can run code), or None
    sensitive: str | None = None


class Declined(str):
    """A deny that says why, in words for the model and the card (`declined: ...`), where
    the reason is not the person's no (the page showing the question went away)."""


class Approver(Protocol):
    """Answers `allow`, `deny` or `always` (allow this tool for the rest of the session)."""

    def approve(self, request: ApprovalRequest) -> Decision | Awaitable[Decision]: ...


class Policy:
    """A fixed answer for headless runs: allow named tools (or all with `yes`), deny the rest."""

    def __init__(self, allow: Iterable[str] = (), yes: bool = False):
        self.allow = set(allow)
        self.yes = yes

    def approve(self, request: ApprovalRequest) -> Decision:
        if self.yes and not request.sensitive:
            return "allow"
        return "allow" if allowed(request.name, request.sensitive, self.allow) else "deny"

    def __repr__(self) -> str:
        return f"Policy(allow={sorted(self.allow)!r}, yes={self.yes})"


@dataclass
class Grants:
    """The tools that run without asking for the rest of a session: allowed by name
    (--allow, ELELEM_ALLOW, /allow) and answered "always"."""

    allow: set[str] = field(default_factory=set)
    always: set[str] = field(default_factory=set)

    def names(self) -> set[str]:
        """Every tool granted, either way."""
        return self.allow | self.always


def allowed(name: str, sensitive: str | None, names: Collection[str]) -> bool:
    """The one rule for a tool allowed by name (--allow, ELELEM_ALLOW, /allow, an "always"
    answer, a `Policy`): it is named, and the call is not sensitive (such a call needs a
    yes for itself)."""
    return sensitive is None and name in names


async def decide(
    call: Call,
    index: int | None,
    out: Renderer,
    *,
    policy: SitePolicy,
    mode: str,
    grants: Grants,
    approver: Approver | None,
    allow_hint: str,
) -> tuple[str | None, CallState]:
    """Whether a resolved `call` may run: `(None, "running")`, else why not and the card
    state (`declined`).

    Unasked: a read tool, the auto mode, a tool that asks the person itself, a tool
    `allowed` by name; none of these but the tool's own question for a tool the site
    policy `asks` for. Otherwise the turn's approver is asked (the card shows the
    question); with none, the call is declined, saying how to allow it (`allow_hint`).
    """
    tool = call.tool
    assert tool is not None
    must = policy.asks(tool.name)
    if tool.asks_person(call.arguments) or (
        must is None and (tool.kind == "read" or mode == "auto")
    ):
        return None, "running"
    why = tool.caution(call.arguments) or must
    if allowed(tool.name, why, grants.names()):
        return None, "running"
    if approver is None:
        if why is not None:
            return SENSITIVE_DECLINED.format(why=why), "declined"
        how = allow_hint.format(name=tool.name)
        return NO_CHANNEL.format(kind=tool.kind, how=how), "declined"
    request = _request(call, tool, index, why)
    out(
        {
            "type": "tool_state",
            "index": index,
            "id": call.id,
            "state": "approval",
            "preview": request.preview,
        }
    )
    decision = await _answer(approver, request)
    if isinstance(decision, Declined):
        return str(decision), "declined"
    if decision == "always":
        grants.always.add(tool.name)
    if decision in ("allow", "always"):
        return None, "running"
    if why is not None:
        return SENSITIVE_DECLINED.format(why=why), "declined"
    return "declined: the person did not allow this call", "declined"


async def _answer(approver: Approver, request: ApprovalRequest) -> Decision | str:
    """The approver's answer; a plain `def` runs in a worker thread (it may block)."""
    decision: Decision | str = await call_off_loop(approver.approve, request)
    return decision


def _request(call: Call, tool: Tool, index: int | None, why: str | None) -> ApprovalRequest:
    """The question for `call`: its preview, headed by the caution of a sensitive call."""
    preview = call.prepared[0] if call.prepared is not None else tool.describe(call.arguments)
    if why is not None:
        preview = f"CAUTION: {why}. Allowing it now does not allow the next one.\n\n{preview}"
    return ApprovalRequest(
        call.id, tool.name, tool.kind, call.arguments, preview, index, sensitive=why
    )
