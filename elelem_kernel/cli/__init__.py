"""The `elelem-kernel` command: ask, chat, review, providers, mcp, files, trust, acp, install.

One parser (`cli/parser.py`) with a module per subcommand. Everything printed from model,
tool or provider text goes through `elelem_kernel.visible`, so a terminal shows escape
sequences instead of obeying them. SIGTERM and SIGHUP end a running turn as Ctrl-C does
(tools' process groups are killed) and exit with 128 + the signal (`cli/signals.py`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from elelem_kernel.cli.parser import COMMANDS, build_parser
from elelem_kernel.cli.signals import Signals
from elelem_kernel.errors import ElelemError, Stopped
from elelem_kernel.visible import visible

#: Commands that handle signals and errors themselves (a review, a server, an install).
ON_THEIR_OWN = ("review", "acp", "install")


def main(argv: list[str] | None = None) -> int:
    """Run `elelem-kernel ARGV...`; the exit code."""
    from elelem_kernel.agent.registry import (
        set_notify,  # lazy: the CLI starts fast; only a run loads the registry
    )

    set_notify(lambda line: print(line, file=sys.stderr))  # skipped project plugins
    words = list(sys.argv[1:] if argv is None else argv)
    # only the subcommand that runs (the full parser for the top-level help and errors)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "trust" and args.list and args.folder:
        parser.error("trust --list takes no folder")
    if args.command in ON_THEIR_OWN:
        return _command(args, Signals())  # not entered: SIGTERM and SIGHUP act as always
    with Signals() as signals:
        try:
            code = _command(args, signals)
        except ElelemError as e:
            print(f"Error: {visible(str(e))}", file=sys.stderr)
            code = 1
        except (KeyboardInterrupt, Stopped):  # outside a turn: nothing to end but the program
            code = 130
    if signals.received is None:
        return code
    # The turn has ended and its tools' processes are gone. Worker threads (a python tool
    # still computing) would hold the exit open, and the terminal may be gone (SIGHUP).
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(128 + signals.received)


def _command(args: argparse.Namespace, signals: Signals) -> int:
    """Run the subcommand; each module is imported only when its command runs."""
    if args.command == "ask":
        from elelem_kernel.cli import ask_command  # lazy: each command loads only what it needs

        return ask_command.run(args)
    if args.command == "chat":
        from elelem_kernel.cli import chat_command  # lazy: each command loads only what it needs

        return chat_command.run(args, signals)
    if args.command == "review":
        from elelem_kernel.cli import review_command  # lazy: each command loads only what it needs

        return review_command.run(args)
    if args.command == "acp":
        from elelem_kernel import acp  # lazy: each command loads only what it needs

        return acp.main(args)
    if args.command == "install":
        from elelem_kernel.cli import install_command  # lazy: each command loads only what it needs

        return install_command.run(args)
    return _listing(args)


def _listing(args: argparse.Namespace) -> int:
    """The commands that run no turn: providers, mcp, files, policy, trust."""
    if args.command == "providers":
        from elelem_kernel.cli import (
            providers_command,  # lazy: each command loads only what it needs
        )

        return providers_command.run()
    if args.command == "mcp":
        from elelem_kernel.cli import mcp_command  # lazy: each command loads only what it needs

        return mcp_command.run(args.workspace, start=not args.no_start)
    if args.command == "files":
        from elelem_kernel.cli import files_command  # lazy: each command loads only what it needs

        return files_command.run(args.paths)
    if args.command == "policy":
        from elelem_kernel.agent import policy  # lazy: each command loads only what it needs

        print(visible(policy.load().describe()))
        return 0
    from elelem_kernel.cli import trust_command  # lazy: each command loads only what it needs

    return trust_command.run(args)
