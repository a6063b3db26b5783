"""`elelem-kernel review`: review a git change headless and write the report (for CI).

`-o` is `--option` here as in every command; the report file is `--report FILE`. The old
`-o FILE` (a value without `=`) and `--output FILE` still work, with a deprecation line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from elelem_kernel.cli.parser import build_parser
from elelem_kernel.errors import ConfigError, ElelemError
from elelem_kernel.visible import json_visible, visible

DEPRECATED = "elelem-kernel review: {old} FILE is deprecated, write --report FILE{why}"


def run(args: argparse.Namespace) -> int:
    """Run the review `args` describe, print or write its report; the exit code."""
    from elelem_kernel.agent.budget import EXIT_CODE  # lazy: only a review needs them
    from elelem_kernel.options import parse_pairs
    from elelem_kernel.render.terminal_view import TerminalRenderer
    from elelem_kernel.review.diff import BUDGET
    from elelem_kernel.review.report import render
    from elelem_kernel.review.run import nothing, review

    renderer = None if args.quiet else TerminalRenderer(out=sys.stderr, err=sys.stderr)
    try:
        if args.mode is not None:  # not taken for --model: argparse would, as an abbreviation
            raise ConfigError("a review always runs in plan mode (read-only tools); drop --mode")
        options, output = _report_file(args)
        result = review(
            args.target or None,
            provider=args.provider,
            model=args.model,
            options=parse_pairs(options),
            focus=args.focus,
            severity=args.severity,
            workspace=args.workspace,
            budget=BUDGET if args.diff_budget is None else args.diff_budget,
            spend=args.budget,
            renderer=renderer,
        )
    except ElelemError as e:  # ReviewError, ConfigError (unknown provider, two reports), ...
        print(f"elelem-kernel review: error: {visible(str(e))}", file=sys.stderr)
        return 2
    report = render(result, args.format)
    if output:
        Path(output).write_text(report, encoding="utf-8")
    if result.empty:
        machine = not output and args.format != "markdown"
        print(nothing(result.skipped), file=sys.stderr if machine else sys.stdout)
        if machine:
            sys.stdout.write(_shown(report, args.format))
        return 0
    if not output:
        sys.stdout.write(_shown(report, args.format))
    if result.stop == "budget":
        return EXIT_CODE  # the stop's line is on stderr already, with how to raise it
    for error in result.errors:
        print(f"elelem-kernel review: error: {visible(str(error))}", file=sys.stderr)
    if result.errors:
        return 2
    return 1 if result.failed(args.fail_on) else 0


def _report_file(args: argparse.Namespace) -> tuple[list[str], str | None]:
    """The provider options, and the report's file: `--report`, or a deprecated spelling.

    An `-o` value without `=` is the old `-o FILE`; `--output FILE` the old long form.
    Each says once on stderr what to write instead.
    """
    options = [o for o in args.option if "=" in o]
    files = [o for o in args.option if "=" not in o]
    if files:
        print(DEPRECATED.format(old="-o", why=" (-o is now --option NAME=VALUE)"), file=sys.stderr)
    if args.old_output is not None:
        print(DEPRECATED.format(old="--output", why=""), file=sys.stderr)
        files.append(args.old_output)
    if args.report is not None:
        files.append(args.report)
    if len(files) > 1:
        raise ConfigError(
            f"give the report file once (--report FILE), not {len(files)}: {' '.join(files)}"
        )
    return options, files[0] if files else None


def _shown(report: str, fmt: str) -> str:
    """The report as written to stdout: control characters from the model made visible."""
    return visible(report) if fmt == "markdown" else json_visible(report)


def main(argv: Sequence[str]) -> int:
    """`elelem-kernel review ARGV...` from Python; the exit code."""
    return run(build_parser("review").parse_args(["review", *argv]))
