"""`elelem-kernel ask`: one turn, its prompt from the words and piped stdin."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from elelem_kernel.cli.session_from_flags import new_session
from elelem_kernel.cli.signals import EXIT_READER_GONE, ReaderGone
from elelem_kernel.events import EXIT_CODES


def run(args: argparse.Namespace) -> int:
    """Run the turn (in `--notebook` NB, continuing it); the exit code."""
    from elelem_kernel.render.terminal_view import (  # lazy: only a turn needs it
        JsonRenderer,
        TerminalRenderer,
    )

    prompt = _prompt(args.prompt)
    if args.notebook:
        from elelem_kernel.cli.ask_notebook import (
            ask_in_notebook,  # lazy: only this option needs it
        )

        args.workspace = args.workspace or str(Path(args.notebook).resolve().parent)
        reader = ReaderGone(JsonRenderer() if args.json else TerminalRenderer())
        code = ask_in_notebook(
            Path(args.notebook), prompt, session=new_session(args), renderer=reader
        )
        return EXIT_READER_GONE if reader.gone else code
    session = new_session(args)
    reader = ReaderGone(JsonRenderer() if args.json else TerminalRenderer())
    result = session.run(prompt, reader)
    if reader.gone:
        return EXIT_READER_GONE
    return EXIT_CODES.get(result.stop, 0)


def _prompt(words: list[str]) -> str:
    """The words joined, with piped stdin after them in a fenced block."""
    prompt = " ".join(words)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped.strip():
            prompt = f"{prompt}\n\n```\n{piped.rstrip()}\n```" if prompt else piped
    return prompt
