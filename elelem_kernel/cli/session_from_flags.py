"""A session from the command line's flags, for `ask` and `chat`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from elelem_kernel.agent.approval import Policy
from elelem_kernel.agent.budget import parse
from elelem_kernel.agent.front import PlainFront, TurnSettings
from elelem_kernel.options import parse_pairs
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.agent.approval import Approver
    from elelem_kernel.agent.session import Session


def new_session(args: argparse.Namespace) -> Session:
    """A session as `args` ask: provider, model, options, mode, approvals, budget, notice."""
    from elelem_kernel.assembly import (
        sessions,  # lazy: the CLI starts fast; a run loads the registry
    )

    options = parse_pairs(args.option)
    approver: Approver | None = None
    if args.yes:
        approver = Policy(yes=True)
    elif sys.stdin.isatty() and sys.stderr.isatty():
        from elelem_kernel.cli.terminal_approver import (
            TerminalApprover,  # lazy: only a terminal needs it
        )

        approver = TerminalApprover()
    hint = "/budget {amount}" if args.command == "chat" else "--budget {quoted}"
    front = PlainFront(
        TurnSettings(approver, budget_hint=hint),
        propose=_proposer(to_stderr=getattr(args, "json", False)),
        tell=_tell,
    )
    session = sessions.new_session(
        provider=args.provider,
        model=args.model,
        mode=args.mode,
        workspace=args.workspace,
        system_prompt=args.system_prompt,
        history=args.history,
        allow=args.allow,
        front=front,
        provider_options=options,
    )
    set_budget(session, args.budget)
    return session


def set_budget(session: Session, text: str | None) -> None:
    """Put the `--budget` given (if any) in force (its messages in the front's words)."""
    if text is not None:
        session.accounts.ledger.set(parse(text), session.facts)


def _tell(text: str) -> None:
    """A notice (which provider answers, and why) on stderr, control characters shown."""
    print(f"elelem: {visible(text)}", file=sys.stderr)


def _proposer(to_stderr: bool) -> Callable[[str], None]:
    """How `propose_cell` shows a cell here: printed, on stderr with `--json`.

    With `--json` every stdout line is one JSON object; the source is there already, in
    the arguments of the call's `tool_use` block.
    """

    def propose(source: str) -> None:
        if to_stderr:
            print(f"elelem: proposed cell:\n{visible(source)}", file=sys.stderr)
        else:
            print(visible(source))

    return propose
