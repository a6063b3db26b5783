"""Compaction: the oldest turns of a conversation replaced by a summary the model writes.

When the next request would pass `context.THRESHOLD` of the window (or the person asks with
`/compact`), the oldest turns that are still sent are summarised by the model itself: a
short fixed instruction, no tools, the turns as a transcript. The summary replaces them in
every later request. Turns are compacted in a batch, down to about half the window, so the
requests between two compactions share their prefix (what prompt caches bill least).

A compaction is stored in the record of the turn that made it (`record["compaction"]`,
record version 2): `upto` is the id of the newest turn it replaces, `summary` replaces that
turn and every turn before it. If the model cannot summarise (an error, an empty answer, a
summary cut off at its output limit, a summary still too large), the turns are left out
instead, `failed` says why, and the note in the turn's output says so: a turn is never
dropped without saying. When the window is too small for a useful summary beside what
stays (`no_room`), no summary is asked for: the turns are left out at once, saying so. A `/compact` whose summary would make the request larger than the
turns it replaces changes nothing, and says so.

`compact` is the step a turn takes (`Turn.prepare` decides when); later requests send the
summary as `conversation.summary_messages`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from elelem_kernel.agent.context import CHARS_PER_TOKEN, THRESHOLD, estimate, short
from elelem_kernel.agent.conversation import summary_messages, turn_messages
from elelem_kernel.agent.record import CompactionEntry, TurnRecord
from elelem_kernel.events import Message, Usage
from elelem_kernel.text import clip_middle, shorten

if TYPE_CHECKING:
    from elelem_kernel.agent.blocks import Renderer
    from elelem_kernel.agent.conversation import Conversations
    from elelem_kernel.agent.model_facts import ModelFacts
    from elelem_kernel.agent.record import TurnRecorder

INSTRUCTION = (
    "You compact a long conversation between a person and a coding agent so that it fits "
    "the model's context window. Write the summary that will replace the turns below in "
    "the agent's memory. Keep: what the person asked for and still wants, decisions made "
    "and why, file names and paths, names, numbers and values, commands run and what they "
    "showed, errors seen, and open questions. Drop greetings and repetition. Answer with "
    "the summary only, in plain text, in at most {words} words. Do not call tools."
)
#: After a compaction the request should use at most this share of the window.
TARGET = 0.5
#: A summary request may use this share of the window; bigger transcripts go in parts.
REQUEST_SHARE = 0.75
#: Characters of one tool result kept in the transcript.
RESULT_CHARS = 1_500
#: A summary's reply limit (tokens): its own, never the person's `max_tokens`, which may be
#: too small for it; at most a quarter of the window.
SUMMARY_TOKENS = 4_096
#: The fewest tokens a summary is useful in (about 100 words); with less room beside what
#: the request keeps, the oldest turns are left out without asking for one.
MIN_SUMMARY = 150

#: The notice of a `/compact` whose summary would not make the request smaller.
LARGER = (
    "/compact: kept the conversation as it was: the summary would make the request larger "
    "(~{after:,} tokens) than the turns it replaces (~{before:,} tokens)"
)


@dataclass
class Compaction:
    """One compaction: which turns it replaces, the summary, and the sizes around it."""

    upto: str
    turns: int
    summary: str
    before: int
    after: int = 0
    failed: str | None = None
    focus: str | None = None
    usage: Usage = field(default_factory=Usage)

    def supersede(self, earlier: CompactionEntry | None) -> None:
        """Replace `earlier`, a compaction made before in the same turn (its summary is in
        this one): the size before is the first one's, and so is the focus unless a new one
        was given."""
        if earlier:
            self.before = int(earlier.get("before") or self.before)
            self.focus = self.focus or earlier.get("focus")

    def as_record(self) -> CompactionEntry:
        """The `compaction` entry of a turn record."""
        entry: CompactionEntry = {
            "upto": self.upto,
            "turns": self.turns,
            "summary": self.summary,
            "before": self.before,
            "after": self.after,
        }
        if self.failed:
            entry["failed"] = self.failed
        if self.focus:
            entry["focus"] = self.focus
        return entry


class Compacting(Protocol):
    """What compaction reads and sets of the turn it runs in (a `Turn`)."""

    cell: str | None
    out: Renderer
    recorder: TurnRecorder
    #: The next request, rebuilt with the summary.
    messages: list[Message]

    @property
    def facts(self) -> ModelFacts:
        """The session's model, whose estimates size the request."""

    @property
    def conversations(self) -> Conversations:
        """The session's conversations (the active one is compacted)."""

    def tools(self) -> Sequence[Mapping[str, object]]:
        """The tool specs the turn's requests send."""

    def request_messages(self, pending: CompactionEntry | None) -> list[Message]:
        """The turn's request with the compaction `pending` applied."""

    async def ask(self, messages: list[Message], usage: Usage, limit: int) -> str:
        """One request without tools (the summary), its tokens added to `usage`."""


async def compact(
    turn: Compacting, before: int, window: int, focus: str | None, tail: list[Message]
) -> Compaction | None:
    """The compaction step of a turn whose next request is `before` tokens: summarise the
    oldest active turns and rebuild `turn.messages` with the summary and `tail` (the turn's
    own rounds so far). `focus`: what `/compact` asked to keep ("" nothing in particular);
    not None also compacts all but the newest turn.

    Returns the compaction made (a summary still too large is a failed one: the turns are
    left out), or None: no turn to compact, or a `/compact` whose summary would make the
    request larger, which changes nothing and says so.
    """
    facts, conversations = turn.facts, turn.conversations
    current = turn.recorder.record.get("compaction")  # made before in this turn: superseded
    active = conversations.active.active(turn.cell)
    summary, turns = conversations.active.compacted(active, current)
    if not turns:
        return None
    asked, conversations.compact_next = conversations.compact_next is not None, None
    sizes = [facts.estimate(turn_messages(t, conversations.history)) for t in turns]
    old, kept = _choose(turns, sizes, before, window, focus)
    # The summary replaces every active turn up to the newest one it covers, the ones
    # an earlier summary covered included: that is the count a person reads.
    covered = len(active) - len(kept)
    entry = Compaction(old[-1]["turn"], covered, summary, before, focus=focus or None)
    entry.supersede(current)
    fixed = before - sum(sizes) - (facts.estimate(summary_messages(summary)) if summary else 0)
    entry.failed = no_room(fixed + sum(sizes[len(old) :]), window)
    if not entry.failed:  # else the oldest turns are left out, with no summary request
        turn.out(
            {
                "type": "status",
                "state": "compacting",
                "turns": len(old),
                "provider": facts.provider_name,
                "model": facts.model,
            }
        )
        limit = summary_limit(window)
        await _write_summary(entry, lambda m: turn.ask(m, entry.usage, limit), old, window, focus)
    messages = _request(turn, entry, tail)
    if asked and not entry.failed and entry.after >= before:
        turn.out({"type": "notice", "text": LARGER.format(after=entry.after, before=before)})
        return None
    if not entry.failed and entry.after > THRESHOLD * window:
        entry.failed = f"the summary is still too large, ~{short(entry.after)} tokens"
        entry.summary = summary
        messages = _request(turn, entry, tail)
    turn.messages = messages
    return entry


def no_room(kept: int, window: int) -> str | None:
    """Why no summary is asked for when `kept` tokens (system prompt, tools, the turns
    kept, the prompt) stay in the request: not even a short summary (`MIN_SUMMARY` tokens)
    would fit under `THRESHOLD` of the window beside them (a small window); None when one
    would."""
    need = MIN_SUMMARY + estimate(summary_messages(""))
    if kept + need <= THRESHOLD * window:
        return None
    return f"no room for a summary beside ~{short(kept)} tokens in a {short(window)} window"


def _request(turn: Compacting, entry: Compaction, tail: list[Message]) -> list[Message]:
    """The turn's next request with `entry` applied; its size goes to `entry.after`."""
    messages = turn.request_messages(entry.as_record()) + tail
    entry.after = turn.facts.estimate(messages, turn.tools())
    return messages


def split(
    turns: list[TurnRecord], sizes: list[int], keep: int, force: bool = False
) -> tuple[list[TurnRecord], list[TurnRecord]]:
    """`(oldest to compact, newest to keep)`: keep the newest turns that fit `keep` tokens.

    At least one turn is compacted when there is one; `force` (`/compact`) keeps only the
    newest turn, and compacts it too when it is the only one.
    """
    kept = 0
    total = 0
    for size in reversed(sizes):
        if total + size > keep:
            break
        total += size
        kept += 1
    if force:
        kept = min(kept, 1)
    kept = min(kept, len(turns) - 1) if turns else 0
    cut = len(turns) - kept
    return turns[:cut], turns[cut:]


def _choose(
    turns: list[TurnRecord], sizes: list[int], before: int, window: int, focus: str | None
) -> tuple[list[TurnRecord], list[TurnRecord]]:
    """`(oldest to compact, newest to keep)` for a request of `before` tokens whose history
    is `turns` (`sizes` tokens each): afterwards it should use `TARGET` of the window, with
    room for the summary. `focus` not None (`/compact`, or a forced compaction): `split`'s
    `force`."""
    fixed = before - sum(sizes)
    keep = int(TARGET * window) - fixed - window // 10  # room for the summary
    return split(turns, sizes, keep, force=focus is not None)


def transcript(turns: list[TurnRecord], limit: int) -> str:
    """The turns as plain text for the summary request, each text cut to stay under `limit`."""
    each = max(limit // max(3 * len(turns), 1), 200)
    parts = []
    for record in turns:
        lines = [f"## The person asked\n{clip_middle(str(record.get('prompt') or ''), each)}"]
        for round_ in record.get("rounds") or []:
            for call in round_.get("calls") or []:
                arguments = json.dumps(call.get("arguments") or {}, ensure_ascii=False)
                result = clip_middle(str(call.get("result") or ""), min(each, RESULT_CHARS))
                lines.append(f"- tool {call.get('name')} {clip_middle(arguments, 300)} → {result}")
        reply = str(record.get("reply") or "") or f"[no reply: {record.get('stop')}]"
        lines.append(f"## The agent answered\n{clip_middle(reply, each)}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def words(window: int) -> int:
    """How many words a summary may have for a window of `window` tokens."""
    return max(min(window // 20, 1_500), 100)


def summary_limit(window: int) -> int:
    """The reply limit of a summary request (tokens): room for `words(window)` words."""
    return max(min(SUMMARY_TOKENS, window // 4), words(window) * 2)


async def summarise(
    ask: Callable[[list[Message]], Awaitable[str]],
    turns: list[TurnRecord],
    previous: str,
    window: int,
    focus: str | None = None,
) -> str:
    """The summary of `previous` and `turns`, asked in as few requests as fit the window.

    Each request carries the summary so far and the next turns that fit; a turn too big
    on its own is cut. Raises on errors and on an empty answer.
    """
    limit = int(window * REQUEST_SHARE) * CHARS_PER_TOKEN
    instruction = INSTRUCTION.format(words=words(window))
    if focus:
        instruction += f" The person asked to keep in particular: {focus}"
    summary = previous
    pending = list(turns)
    while pending:
        room = limit - len(instruction) - len(summary)
        chunk = [pending.pop(0)]
        while pending and len(transcript([*chunk, pending[0]], room * 10)) <= room:
            chunk.append(pending.pop(0))
        text = transcript(chunk, max(room, 2_000))
        earlier = f"Summary of what came before:\n{summary}\n\n" if summary else ""
        answer = await ask(
            [
                {"role": "system", "content": instruction},
                {"role": "user", "content": f"{earlier}The turns to summarise:\n\n{text}"},
            ]
        )
        if not answer.strip():
            raise ValueError("the model's summary was empty")
        summary = answer.strip()
    return summary


async def _write_summary(
    entry: Compaction,
    ask: Callable[[list[Message]], Awaitable[str]],
    turns: list[TurnRecord],
    window: int,
    focus: str | None,
) -> None:
    """Summarise `entry.summary` (the earlier summary) and `turns` into `entry.summary`.

    When the model cannot (an error, an empty or cut-off answer), `entry.failed` says why
    and the earlier summary stays: the turns are then left out, and the note says so.
    """
    try:
        entry.summary = await summarise(ask, turns, entry.summary, window, focus)
    except Exception as e:
        entry.failed = shorten(" ".join(str(e).split()) or type(e).__name__, 160)
