"""`elelem-kernel chat`: a conversation in the terminal; `/` lines are commands, Ctrl-D ends.

Each turn runs through the one sync bridge (`Session.run`, sync.py), on a loop of its
own that is closed after the provider's connections; between turns no loop runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from elelem_kernel.cli.session_from_flags import new_session
from elelem_kernel.cli.signals import Signals
from elelem_kernel.errors import BadInput, ElelemError
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.agent.blocks import Renderer
    from elelem_kernel.agent.session import Session


def run(args: argparse.Namespace, signals: Signals) -> int:
    """Read lines and run them as turns or commands until end of input (or a signal)."""
    session = new_session(args)
    from elelem_kernel.render.terminal_view import TerminalRenderer  # lazy: only a turn needs it

    renderer = TerminalRenderer()
    print(
        f"elelem chat · {session.provider_name} · {session.mode} mode · /help for commands, Ctrl-D to end",
        file=sys.stderr,
    )
    while True:
        try:
            line = input("› ")
        except EOFError:
            print(file=sys.stderr)
            return 0
        except KeyboardInterrupt:
            print(file=sys.stderr)
            continue
        if not line.strip():
            continue
        if line.split()[0] == "/review":  # a turn, as in the Elelem kernel
            _review(session, line, renderer)
            continue
        if line.startswith("/"):
            print(visible(session.command(line)))
            continue
        session.run(line, renderer)
        if signals.received is not None:
            return 130


def _review(session: Session, line: str, renderer: Renderer) -> None:
    """`/review [TARGET ...] [--focus TEXT] [--severity LEVEL]` in the chat: a review turn."""
    from elelem_kernel.agent.commands import split_words  # lazy: only reviews need it
    from elelem_kernel.review.run import prepare  # lazy: only reviews need it

    parser = argparse.ArgumentParser(prog="/review", add_help=False)
    parser.add_argument("target", nargs="*")
    parser.add_argument("--focus")
    parser.add_argument("--severity")
    try:
        args, unknown = parser.parse_known_args(split_words(line)[1:])
        if unknown:
            raise BadInput(f"unknown option {unknown[0]!r}; use --focus or --severity")
        review = prepare(session, args.target or None, focus=args.focus, severity=args.severity)
    except ElelemError as error:  # BadInput, or a ReviewError
        print(f"/review: {visible(str(error))}", file=sys.stderr)
        return
    if review is None:
        return
    with review:
        session.run(review.prompt, renderer, extras=review.extras)
