"""Running a review: for fronts (`prepare`/`restore_mode`), for Python (`review`), for CI (`main`).

Fronts (the `%%elelem review` magic, the kernel's `/review`) run one turn:

    prompt = prepare(session, "HEAD~1", focus=None, severity=None)  # None: nothing to review
    if prompt:
        try:
            result = await session.turn(prompt, renderer=view)  # record["findings"]
        finally:
            restore_mode(session)

`review()` and the CLI run one turn per part of a large diff and build a ReviewResult.
"""

from __future__ import annotations

import argparse
import sys
import weakref
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent.budget import EXIT_CODE, budget_argument, parse
from elelem_kernel.agent.sync import run_sync
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.errors import ElelemError
from elelem_kernel.options import parse_pairs
from elelem_kernel.render.terminal import TerminalRenderer
from elelem_kernel.review import prompt as prompts
from elelem_kernel.review.diff import BUDGET, Diff, collect
from elelem_kernel.review.findings import SEVERITIES, at_least, check_severity, sort
from elelem_kernel.review.report import FORMATS, ReviewResult, render
from elelem_kernel.review.review_tools import FindingLog, add_review_tools
from elelem_kernel.review.target import Target, resolve
from elelem_kernel.visible import json_visible, visible

if TYPE_CHECKING:
    from elelem_kernel.agent.session import Session

NOTHING = "nothing to review"


#: The review scope each prepared session is in, left by `restore_mode`.
_SCOPES: weakref.WeakKeyDictionary[Session, ExitStack] = weakref.WeakKeyDictionary()


def reviewing(session: Session, diff: Diff) -> tuple[ExitStack, FindingLog]:
    """Enter plan mode with `report_finding` and `git` for `diff`; close the stack to leave."""
    box = Toolbox()
    log = add_review_tools(session, [f.path for f in diff.files], diff.target, box)
    scope = ExitStack()
    scope.enter_context(session.overridden(mode="plan", tools=box.tools.values()))
    return scope, log


def _meta(diff: Diff) -> dict:
    return {
        "target": diff.target.label,
        "command": diff.target.command(),
        "reviewed": diff.reviewed,
        "skipped": diff.skipped,
    }


def prepare(
    session: Session,
    target: str | Sequence[str] | None,
    focus: str | None = None,
    severity: str | None = None,
) -> str | None:
    """Set the session up for a review of TARGET and return the prompt for `session.turn`.

    Switches to plan mode and adds `report_finding` and `git`; `restore_mode` undoes both.
    Returns None (after printing "nothing to review") when the diff is empty. A diff over
    the budget is cut to its first part; the prompt lists the files left out. Raises
    ReviewError (not a git repository, unknown revision) and ValueError (bad severity).
    """
    severity = check_severity(severity)
    diff = collect(resolve(target, Path(session.workspace)))
    if not diff.parts:
        print(_nothing(diff.skipped))
        return None
    diff.skipped += [
        {"path": p, "reason": "over the budget of one review turn"} for p in _later_parts(diff)
    ]
    diff.parts = diff.parts[:1]
    restore_mode(session)
    _SCOPES[session], _ = reviewing(session, diff)
    session.turn_extras["review"] = _meta(diff)
    return prompts.build(diff, 0, focus, severity, Path(session.workspace))


def _later_parts(diff: Diff) -> list[str]:
    return [f.path for part in diff.parts[1:] for f in part]


def _nothing(skipped: list[dict]) -> str:
    if not skipped:
        return NOTHING

    listed = "; ".join(f"{s['path']} ({s['reason']})" for s in skipped)
    return visible(f"{NOTHING}: every changed file was skipped: {listed}")


def restore_mode(session: Session) -> None:
    """Undo `prepare`: the mode from before, the review tools gone (replaced tools put back)."""
    scope = _SCOPES.pop(session, None)
    if scope is not None:
        scope.close()


def _empty_result(diff: Diff) -> ReviewResult:
    t = diff.target
    return ReviewResult(t.label, t.command(), skipped=diff.skipped, empty=True)


async def areview(
    target: str | Sequence[str] | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    focus: str | None = None,
    severity: str | None = None,
    workspace: Path | str | None = None,
    budget: int = BUDGET,
    renderer: Callable[[dict], None] | None = None,
    session: Session | None = None,
    options: dict[str, Any] | None = None,
    spend: str | None = None,
) -> ReviewResult:
    """Review TARGET with a new session (or `session`), one turn per part of the diff.

    `budget` bounds the diff (characters a part); `spend` is the budget of money or tokens
    (`--budget`: `2`, `200k tokens`, `0.50/turn`): parts after a stop are not reviewed.
    """
    severity = check_severity(severity)
    t: Target = resolve(target, Path(workspace or Path.cwd()))
    diff = collect(t, budget=budget)
    if not diff.parts:
        return _empty_result(diff)
    own = session is None
    if session is None:
        session = new_session(
            provider=provider, model=model, mode="plan", workspace=t.root, **(options or {})
        )
        session.ledger.hint = "--budget {quoted}"
    if spend is not None:
        session.ledger.set(parse(spend), session)
    scope, log = reviewing(session, diff)
    result = ReviewResult(t.label, t.command(), reviewed=diff.reviewed, skipped=diff.skipped)
    result.provider, result.model = (
        session.provider_name,
        session.model,
    )
    replies = []
    try:
        for i in range(len(diff.parts)):
            if i:
                session.new_conversation()
            session.turn_extras["review"] = _meta(diff)
            turn = await session.turn(prompts.build(diff, i, focus, severity), renderer=renderer)
            if turn.reply and turn.reply.strip():
                replies.append(turn.reply.strip())
            if turn.error:
                result.errors.append(turn.error)
            for key, value in (turn.usage or {}).items():
                if isinstance(value, (int, float)):
                    result.usage[key] = result.usage.get(key, 0) + value
            if turn.stop == "budget":
                result.stop = "budget"
                break
    finally:
        scope.close()
        if own:
            await session.aclose()
    kept = [f for f in log.findings if severity is None or at_least(f.severity, severity)]
    result.findings = sort(kept)
    result.summary = "\n\n".join(replies)
    return result


def review(target: str | Sequence[str] | None = None, **options: Any) -> ReviewResult:
    """`areview` for synchronous callers; works inside a running event loop (a notebook) too."""
    return run_sync(lambda: areview(target, **options))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="elelem-kernel review",
        description="Review a git change with an agent. TARGET: a range (main..HEAD), a revision "
        "(HEAD~3: changes since it), paths, or nothing (uncommitted changes, else the last commit).",
        epilog="Exit codes: 0 done (or nothing to review), 1 a finding at or above --fail-on, "
        "2 error (not a git repository, unknown revision, provider failure), "
        f"{EXIT_CODE} stopped by --budget (or ELELEM_BUDGET) before passing it.",
    )
    p.add_argument("target", nargs="*", metavar="TARGET")
    p.add_argument(
        "-p", "--provider", help="provider name (default: ELELEM_PROVIDER or the first configured)"
    )
    p.add_argument("--model", help="model name for the provider")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a provider option (repeatable): max_tokens=2000; JSON when it parses, else text "
        "(-o is --output here)",
    )
    p.add_argument(
        "--format", choices=FORMATS, default="markdown", help="report format (default markdown)"
    )
    p.add_argument(
        "--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    p.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        metavar="SEVERITY",
        help="exit 1 if a finding is this bad or worse",
    )
    p.add_argument("--severity", choices=SEVERITIES, help="report only findings this bad or worse")
    p.add_argument("--focus", metavar="TEXT", help="what to look at most (security, tests, ...)")
    p.add_argument("--workspace", "-C", metavar="DIR", help="the repository folder (default: here)")
    p.add_argument("--diff-budget", type=int, default=BUDGET, help=argparse.SUPPRESS)
    budget_argument(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """`elelem-kernel review ...`; returns the exit code."""

    args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    renderer = None
    if not args.quiet:
        renderer = TerminalRenderer(out=sys.stderr, err=sys.stderr)
    try:
        result = review(
            args.target or None,
            provider=args.provider,
            model=args.model,
            options=parse_pairs(args.option),
            focus=args.focus,
            severity=args.severity,
            workspace=args.workspace,
            budget=args.diff_budget,
            spend=args.budget,
            renderer=renderer,
        )
    except ElelemError as e:  # ReviewError, ConfigError (unknown provider), ...
        print(f"elelem-kernel review: error: {visible(str(e))}", file=sys.stderr)
        return 2
    report = render(result, args.format)
    if args.output:
        Path(args.output).write_text(report, encoding="utf-8")
    if result.empty:
        machine = not args.output and args.format != "markdown"
        print(_nothing(result.skipped), file=sys.stderr if machine else sys.stdout)
        if machine:
            sys.stdout.write(_shown(report, args.format))
        return 0
    if not args.output:
        sys.stdout.write(_shown(report, args.format))
    if result.stop == "budget":
        return EXIT_CODE  # the stop's line is on stderr already, with how to raise it
    for error in result.errors:
        print(f"elelem-kernel review: error: {visible(str(error))}", file=sys.stderr)
    if result.errors:
        return 2
    return 1 if result.failed(args.fail_on) else 0


def _shown(report: str, fmt: str) -> str:
    """The report as written to stdout: control characters from the model made visible."""

    return visible(report) if fmt == "markdown" else json_visible(report)


if __name__ == "__main__":
    sys.exit(main())
