"""A session from the command line's flags, for `ask` and `chat`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from elelem_kernel.agent.approval import Policy
from elelem_kernel.agent.budget import parse
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
        from elelem_kernel.cli.approval import (
            TerminalApprover,  # lazy: only a terminal needs it
        )

        approver = TerminalApprover()
    session = sessions.new_session(
        provider=args.provider,
        model=args.model,
        mode=args.mode,
        workspace=args.workspace,
        approver=approver,
        system_prompt=args.system_prompt,
        history=args.history,
        **options,
    )
    session.allow |= set(args.allow)
    hint = "/budget {amount}" if args.command == "chat" else "--budget {quoted}"
    set_budget(session, args.budget, hint)
    session.propose_cell = _proposer(to_stderr=getattr(args, "json", False))
    if session.notice:
        print(f"elelem: {visible(session.notice)}", file=sys.stderr)
    return session


def set_budget(session: Session, text: str | None, hint: str) -> None:
    """Put the `--budget` given (if any) in force; `hint` is how this command raises it."""
    session.ledger.hint = hint
    if text is not None:
        session.ledger.set(parse(text), session)


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
