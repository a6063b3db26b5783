"""Running a review: for fronts (`prepare`), for Python and CI (`review`).

Fronts (the `%%elelem review` magic, the kernel's `/review`, the chat) run one turn:

    review = prepare(session, "HEAD~1", focus=None, severity=None)  # None: nothing to review
    if review is not None:
        with review:  # plan mode and the review tools until the block ends
            result = await session.turn(review.prompt, renderer=view, extras=review.extras)

`review()` (and `elelem-kernel review`, cli/review_command.py) runs one turn per part of a large diff
and builds a ReviewResult.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent.budget import parse
from elelem_kernel.agent.front import PlainFront, TurnSettings
from elelem_kernel.agent.record import add_usage
from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.findings import at_least, check_severity, sort
from elelem_kernel.review import prompt as prompts
from elelem_kernel.review.diff import BUDGET, Diff, Skipped, collect
from elelem_kernel.review.report import ReviewResult
from elelem_kernel.review.review_tools import FindingLog, review_toolset
from elelem_kernel.review.target import Target, resolve
from elelem_kernel.sync import run_sync
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.agent.blocks import Renderer
    from elelem_kernel.agent.session import Session

NOTHING = "nothing to review"


#: How a review run's budget is raised, in the words of its messages.
BUDGET_HINT = "--budget {quoted}"


def reviewing(session: Session, diff: Diff) -> tuple[ExitStack, FindingLog]:
    """Enter plan mode with `report_finding` and `git` for `diff`; close the stack to leave."""
    tools, log = review_toolset(session.tool_context, [f.path for f in diff.files], diff.target)
    scope = ExitStack()
    scope.enter_context(session.overridden(mode="plan", tools=tools.tools.values()))
    return scope, log


def _meta(diff: Diff) -> dict[str, object]:
    return {
        "target": diff.target.label,
        "command": diff.target.command(),
        "reviewed": diff.reviewed,
        "skipped": diff.skipped,
    }


@dataclass
class PreparedReview:
    """A review turn made ready: its prompt, the fields its record gets (`extras`, for
    `Session.turn`), and the session in plan mode with the review tools until `close`
    (or the end of a `with` block) puts back the mode and the tools."""

    prompt: str
    extras: dict[str, object]
    scope: ExitStack

    def close(self) -> None:
        """Leave the review: the mode from before, the review tools gone (replaced tools
        put back)."""
        self.scope.close()

    def __enter__(self) -> PreparedReview:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def prepare(
    session: Session,
    target: str | Sequence[str] | None,
    focus: str | None = None,
    severity: str | None = None,
) -> PreparedReview | None:
    """Set the session up for a review of TARGET: the prompt and record fields for
    `session.turn`, and the review mode to close after it.

    Switches to plan mode and adds `report_finding` and `git`; closing undoes both.
    Returns None (after printing "nothing to review") when the diff is empty. A diff over
    the budget is cut to its first part; the prompt lists the files left out. Raises
    ReviewError (not a git repository, unknown revision) and ValueError (bad severity).
    """
    severity = check_severity(severity)
    diff = collect(resolve(target, Path(session.workspace)))
    if not diff.parts:
        print(nothing(diff.skipped))
        return None
    diff.skipped += [
        {"path": p, "reason": "over the budget of one review turn"} for p in _later_parts(diff)
    ]
    diff.parts = diff.parts[:1]
    prompt = prompts.build(diff, 0, focus, severity, Path(session.workspace))
    scope, _ = reviewing(session, diff)
    return PreparedReview(prompt, {"review": _meta(diff)}, scope)


def _later_parts(diff: Diff) -> list[str]:
    return [f.path for part in diff.parts[1:] for f in part]


def nothing(skipped: list[Skipped]) -> str:
    if not skipped:
        return NOTHING

    listed = "; ".join(f"{s['path']} ({s['reason']})" for s in skipped)
    return visible(f"{NOTHING}: every changed file was skipped: {listed}")


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
    renderer: Renderer | None = None,
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
        chosen = dict(options or {})
        settings = TurnSettings(chosen.pop("approver", None), budget_hint=BUDGET_HINT)
        session = new_session(
            provider=provider,
            model=model,
            mode="plan",
            workspace=t.root,
            front=PlainFront(settings),
            **chosen,
        )
    if spend is not None:
        session.accounts.ledger.set(parse(spend), session.facts)
    scope, log = reviewing(session, diff)
    result = ReviewResult(t.label, t.command(), reviewed=diff.reviewed, skipped=diff.skipped)
    result.provider, result.model = session.provider_name, session.model
    try:
        replies = await _review_parts(session, diff, result, focus, severity, renderer)
    finally:
        scope.close()
        if own:
            await session.facts.aclose()
    kept = [f for f in log.findings if severity is None or at_least(f.severity, severity)]
    result.findings = sort(kept)
    result.summary = "\n\n".join(replies)
    return result


async def _review_parts(
    session: Session,
    diff: Diff,
    result: ReviewResult,
    focus: str | None,
    severity: str | None,
    renderer: Renderer | None,
) -> list[str]:
    """One turn per part of `diff`, each in a new conversation; the replies.

    Errors, usage and a budget's stop go into `result`; a stop ends the review.
    """
    replies = []
    for i in range(len(diff.parts)):
        if i:
            session.conversations.new()
        prompt = prompts.build(diff, i, focus, severity)
        turn = await session.turn(prompt, renderer=renderer, extras={"review": _meta(diff)})
        if turn.reply and turn.reply.strip():
            replies.append(turn.reply.strip())
        if turn.error:
            result.errors.append(turn.error)
        add_usage(result.usage, turn.usage)
        if turn.stop == "budget":
            result.stop = "budget"
            break
    return replies


def review(target: str | Sequence[str] | None = None, **options: Any) -> ReviewResult:
    """`areview` for synchronous callers; works inside a running event loop (a notebook) too."""
    return run_sync(lambda: areview(target, **options))
