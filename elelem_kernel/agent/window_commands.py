"""`/compact [what to keep]` and `/context-window [N]`: the long-session commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from elelem_kernel.agent.context import THRESHOLD, parse_window, short
from elelem_kernel.sync import run_sync

if TYPE_CHECKING:
    from elelem_kernel.agent.command_table import Commands, CommandSession, S


def add_window_commands(commands: Commands[S]) -> None:
    """Register the commands on `commands`."""
    commands.add(
        "compact",
        "summarise the older turns before the next request (say what to keep, if you like)",
        _compact,
        usage="/compact [what to keep]",
    )
    commands.add(
        "context-window",
        "show or set the model's context window in tokens (off: back to the default)",
        _context_window,
        usage="/context-window [N | 200k | off]",
    )


def window_line(session: CommandSession) -> str:
    """`Window: 6.0k tokens (the option context_window); the next request ~3.1k (52%) ...`.

    The server is asked for its window first (`ask_window`)."""
    ask_window(session)
    window, source = session.facts.window()
    used = session.facts.estimate(session.messages(""), session.toolbox.specs(session.mode))
    return (
        f"Window: {short(window)} tokens ({source}); the next request ~{short(used)} tokens "
        f"({used / window:.0%}); older turns are compacted past {THRESHOLD:.0%}."
    )


def ask_window(session: CommandSession) -> None:
    """Ask the server for its window now, as a turn would (once per provider), so what a
    command says before the first request is what that request will use."""
    run_sync(session.facts.probe_window, close=session.facts.aclose)


def _compact(session: CommandSession, args: str) -> str:
    _, turns = session.conversation.compacted(session.conversation.active())
    if not turns:
        return "Nothing to compact: no turn of this conversation is sent in full."
    session.conversations.compact_next = args.strip()
    keep = f", keeping in particular: {args.strip()}" if args.strip() else ""
    n = len(turns)
    return (
        f"The next turn starts by summarising the older of the {n} turn{'s' if n != 1 else ''} "
        f"sent in full{keep}; the summary is stored with that turn."
    )


def _context_window(session: CommandSession, args: str) -> str:
    value = args.strip()
    if value.lower() in ("off", "default", "none"):
        session.facts.context_window = None
    elif value:
        session.facts.context_window = parse_window(value)
    return window_line(session)
