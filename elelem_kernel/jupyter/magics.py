"""`%%elelem` and `%elelem`: the agent in an ordinary Python notebook.

    %load_ext elelem_kernel

    %%elelem [ask] [-p NAME] [--model M] [-o NAME=VALUE] [--mode MODE] [--allow TOOL] [--new] [--system-prompt TEXT]
             [--budget AMOUNT]
    the prompt, as the cell body

    %%elelem review [TARGET ...] [--focus TEXT] [--severity S]
    more to focus on (optional): the cell body is added to --focus

    %elelem /command args      a slash command (/help lists them; /review is a review turn)
    %elelem                    the status: provider, model, mode, turns, tokens

Options apply to the cell's turn only (`--budget 0.50` caps what this cell's turn spends,
`--budget 2/session` stops it before the session's spending passes $2; `/budget` sets one
for every turn; a turn stopped by a budget fails the cell, so Run All stops there);
`/provider`, `/model` and `/mode` change the session. A `%%elelem` cell with nothing under its first line reaches the magic (IPython
would stop it with "cell body is empty"): a review needs no body, so Run All goes on. Loading the extension imports nothing heavy: the session, the providers and the
widgets are imported on the first turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import ArgDecorator, argument, magic_arguments
from IPython.utils.process import arg_split

from elelem_kernel.agent.commands import TURN_COMMANDS
from elelem_kernel.assembly.turn_flags import CELL, add_flags
from elelem_kernel.errors import BadInput, ElelemError
from elelem_kernel.jupyter import frozen_comm, undoable_comm
from elelem_kernel.jupyter.restore_comm import register
from elelem_kernel.jupyter.shell_front import front_for
from elelem_kernel.options import parse_pairs

SUBCOMMANDS = tuple(TURN_COMMANDS)
_REVIEW_CELL = re.compile(r"%%elelem\s+review(\s|$)")


class turn_flags(ArgDecorator):
    """The turn's flags of `assembly/turn_flags.py`, in a cell's words, for the magic's parser
    (lower case, as IPython's own `argument` decorators)."""

    def add_to_parser(self, parser: Any, group: Any) -> None:
        add_flags(group if group is not None else parser, CELL, cell=True)


@magics_class
class ElelemMagics(Magics):
    """The `elelem` line and cell magic."""

    @no_var_expand
    @magic_arguments()
    @argument(
        "words",
        nargs="*",
        help="; ".join(
            f"{name}{' (default)' if name == 'ask' else ''} {usage}: {about}".replace("  ", " ")
            for name, (usage, about) in TURN_COMMANDS.items()
        ),
    )
    @argument("--new", action="store_true", help="start a fresh conversation first")
    @turn_flags()
    @line_cell_magic
    def elelem(self, line: str, cell: str | None = None) -> None:
        """Ask the agent: the cell body is the prompt. `%elelem /cmd` runs a slash command."""
        try:
            self._elelem(line, cell)
        except ElelemError as error:  # configuration problems: one line saying the fix
            raise UsageError(str(error)) from None

    def _elelem(self, line: str, cell: str | None) -> None:
        front = front_for(self.shell)
        stripped = line.strip()
        if cell is None:
            if not stripped:
                front.say(front.status())
                return
            if stripped.split()[0] == "/review":  # a turn, as in the Elelem kernel
                line = stripped[1:]
            elif stripped.startswith("/"):
                _command(front, stripped)
                return
            elif not stripped.startswith("-") and stripped.split()[0] not in SUBCOMMANDS:
                _ask(front, stripped, _parse(self.elelem, ""))
                return
        args = _parse(self.elelem, line)
        subcommand, *words = args.words or ["ask"]
        if subcommand not in SUBCOMMANDS:
            raise UsageError(
                f"unknown subcommand {subcommand!r}: use ask (default) or review.\n"
                f"{self.elelem.__doc__}"
            )
        body = (cell or "").strip()
        if subcommand == "review":
            focus = "\n".join(part for part in (args.focus, body) if part)
            _review(front, words, focus or None, args)
            return
        if args.focus or args.severity:
            raise UsageError("--focus and --severity are options of review")
        if words and cell is not None:
            raise UsageError(f"unexpected {' '.join(words)!r}: the prompt goes in the cell body")
        text = body or " ".join(words)
        if not text:
            raise UsageError(
                "write the prompt in the cell under %%elelem (see %elelem? for options)"
            )
        _ask(front, text, args)


def _parse(magic: Any, line: str) -> Any:
    """The options of `line`, split as a shell would: `--focus "a b"` gives `a b`."""
    try:
        words = arg_split(line, posix=True)
    except ValueError as error:  # an unbalanced quote
        raise UsageError(f"{error} in: {line}") from None
    return magic.parser.parse_args(words)


def _options(args: Any) -> dict[str, Any]:

    return parse_pairs(getattr(args, "option", None))


def _ask(front: Any, prompt: str, args: Any) -> None:
    with _budget(front, args):
        front.run_prompt(
            prompt,
            provider=args.provider,
            model=args.model,
            options=_options(args),
            mode=args.mode,
            system_prompt=args.system_prompt,
            new=args.new,
            allow=args.allow,
        )


@contextmanager
def _budget(front: Any, args: Any) -> Iterator[None]:
    """The cell's `--budget` in force for its turn; the budget lines in this front's words.

    `--budget AMOUNT` is the cell's own: what its turn spends, and its messages say "this
    cell"; `AMOUNT/session` counts what the session spent, `AMOUNT/turn` is as typed. A
    bad value is a UsageError before the turn. Whether the model has a price is asked
    before each request (the cell's `-p`/`--model` apply only inside the turn), so a
    dollar budget for an unpriced model ends the turn with the message naming tokens.
    """
    ledger = front.get_session().accounts.ledger  # its lines in the front's words
    with ledger.applied(getattr(args, "budget", None), cell=True):
        yield


def _command(front: Any, line: str) -> None:
    front.say(front.command(line))


def _review(front: Any, targets: list[str], focus: str | None, args: Any) -> None:
    try:
        with _budget(front, args):
            front.run_review(
                targets or None,
                focus=focus,
                severity=args.severity,
                provider=args.provider,
                model=args.model,
                options=_options(args),
                new=args.new,
                allow=args.allow,
            )
    except BadInput as error:  # a bad --severity
        raise UsageError(str(error)) from None


def empty_body(lines: list[str]) -> list[str]:
    """An `%%elelem review` cell of one line gets an empty body line, so it reaches the magic.

    IPython refuses a cell magic whose body is empty before calling it; a review needs no
    body. Only reviews: a console asks IPython whether `%%elelem` alone is complete, and a
    prompt cell must wait there for its body.
    """
    if len(lines) == 1 and _REVIEW_CELL.match(lines[0]):
        return [lines[0].rstrip("\n") + "\n", "\n"]
    return lines


def load(ip: Any) -> None:
    """Register the magics on shell `ip` (what `%load_ext elelem_kernel` does), the
    `elelem.restore` comm through which the notebook frontend sends its conversation, and
    the `elelem.undoable` comm through which it asks which turns `/undo` would act on."""
    ip.register_magics(ElelemMagics)
    cleanup = getattr(ip, "input_transformers_cleanup", None)
    if cleanup is not None and empty_body not in cleanup:
        cleanup.append(empty_body)
    register(ip)
    undoable_comm.register(ip)
    frozen_comm.register(ip, lambda: front_for(ip).session)
