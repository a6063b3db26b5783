"""The flags of a turn, declared once for the command line and the `%%elelem` magic.

`-p/--provider`, `--model`, `-o/--option`, `--mode`, `--allow`, `--system-prompt`,
`--budget`, and a review's `--focus` and `--severity` mean the same in `elelem-kernel ask`
(chat, review, acp) and in a `%%elelem` cell: the same names, destinations, metavars and
repetition. Their help is in each front's words, since the scope differs: a command's flags
hold for its run, a cell's for that cell's turn. The command line checks a value as it
parses (argparse's `error: argument --budget: ...`, exit 2); the magic leaves that to the
turn, whose `ConfigError` becomes the cell's one-line `UsageError`.

Both fronts sit above this layer (`cli/`, `jupyter/`); the agent below knows nothing of
argparse.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from elelem_kernel.agent.budget import ENV as BUDGET_ENV
from elelem_kernel.agent.budget import EXIT_CODE, parse
from elelem_kernel.agent.toolbox import MODES
from elelem_kernel.errors import ConfigError
from elelem_kernel.findings import SEVERITIES


class OptionAction(argparse._AppendAction):
    """`-o/--option NAME=VALUE`, appended. The long form always needs the `=`: only the
    short `-o FILE` of old reviews may stand without one (`cli/review_command.py` reads it)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if option_string == "--option" and "=" not in str(values):
            parser.error(f"--option takes NAME=VALUE, not {values!r}")
        super().__call__(parser, namespace, values, option_string)


def checked_budget(text: str) -> str:
    """`--budget AMOUNT` as typed, once `agent/budget.py` can read it (argparse's `type`)."""
    try:
        parse(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


@dataclass(frozen=True)
class Flag:
    """One flag of a turn: its names and what both fronts share, its help in each front's
    words, and the checks the command line makes as it parses."""

    names: tuple[str, ...]
    help: str  #: the command line's words
    cell_help: str  #: the `%%elelem` magic's words
    shared: Mapping[str, Any] = field(default_factory=dict)  #: `add_argument` keywords
    checks: Mapping[str, Any] = field(default_factory=dict)  #: the command line's only


FLAGS: dict[str, Flag] = {
    "provider": Flag(
        ("-p", "--provider"),
        help="provider name (see `elelem-kernel providers`; default: ELELEM_PROVIDER, else "
        "the first configured)",
        cell_help="provider for this turn (see /provider)",
    ),
    "model": Flag(
        ("--model",),
        help="model name (default: the provider's default or ELELEM_MODEL)",
        cell_help="model for this turn",
    ),
    "option": Flag(
        ("-o", "--option"),
        help="a provider option (repeatable): max_tokens=2000, thinking=high; values are "
        "JSON when they parse, else text; ELELEM_OPTIONS sets defaults",
        cell_help="a provider option for this turn (repeatable); JSON when it parses, else text",
        shared={"action": "append", "default": [], "metavar": "NAME=VALUE"},
        checks={"action": OptionAction},
    ),
    "mode": Flag(
        ("--mode",),
        help="which tools are offered: plan (read), build (read+write, the default), "
        "verify (read+execute), auto (all, no approvals); ELELEM_MODE sets the default",
        cell_help="plan, build, verify or auto, for this turn",
        checks={"choices": list(MODES)},
    ),
    "allow": Flag(
        ("--allow",),
        help="allow this tool without asking (repeatable); ELELEM_ALLOW adds to them",
        cell_help="run this tool without asking, in this turn (repeatable); /allow TOOL: the "
        "session",
        shared={"action": "append", "default": [], "metavar": "TOOL"},
    ),
    "system_prompt": Flag(
        ("--system-prompt",),
        help="text put before the default system prompt",
        cell_help="system prompt for this turn",
        shared={"dest": "system_prompt", "metavar": "TEXT"},
    ),
    "budget": Flag(
        ("--budget",),
        help="stop before spending more: dollars (0.50, '$2') or tokens ('200k tokens'), for "
        f"the session or per turn (0.50/turn); off: none; {BUDGET_ENV} sets a default; "
        f"a stop exits with {EXIT_CODE}",
        cell_help="stop this cell's turn before it spends more than AMOUNT: dollars (0.50, $2) "
        "or tokens ('200k tokens'); AMOUNT/session: before the session's spending passes it",
        shared={"metavar": "AMOUNT"},
        checks={"type": checked_budget},
    ),
    "focus": Flag(
        ("--focus",),
        help="what to look at most (security, tests, ...)",
        cell_help="review: what to look at most; the cell body adds to it",
        shared={"metavar": "TEXT"},
    ),
    "severity": Flag(
        ("--severity",),
        help="report only findings this bad or worse",
        cell_help="review: report only findings at least this severe",
        checks={"choices": SEVERITIES},
    ),
}

#: Which model and how it runs: every command that runs a model takes these.
MODEL = ("provider", "model", "option", "mode")
#: The flags of a `%%elelem` cell, in the order its help lists them.
CELL = ("focus", "severity", *MODEL, "allow", "system_prompt", "budget")


def add_flags(parser: argparse.ArgumentParser, names: Iterable[str], *, cell: bool = False) -> None:
    """Add the flags `names` (keys of `FLAGS`) to `parser`: in the magic's words and without
    the command line's parse-time checks when `cell`."""
    for name in names:
        flag = FLAGS[name]
        keywords = dict(flag.shared) if cell else {**flag.shared, **flag.checks}
        parser.add_argument(*flag.names, help=flag.cell_help if cell else flag.help, **keywords)
