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
dropped without saying. A `/compact` whose summary would make the request larger than the
turns it replaces changes nothing, and says so.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from elelem_kernel.agent.context import CHARS_PER_TOKEN, short

INSTRUCTION = (
    "You compact a long conversation between a person and a coding agent so that it fits "
    "the model's context window. Write the summary that will replace the turns below in "
    "the agent's memory. Keep: what the person asked for and still wants, decisions made "
    "and why, file names and paths, names, numbers and values, commands run and what they "
    "showed, errors seen, and open questions. Drop greetings and repetition. Answer with "
    "the summary only, in plain text, in at most {words} words. Do not call tools."
)
#: What the summary is called in later requests (a user message, never a system one).
HEADER = "[Summary of the earlier conversation, written when it was compacted]"
ACK = "Understood: I will continue from this summary of our earlier conversation."
#: After a compaction the request should use at most this share of the window.
TARGET = 0.5
#: A summary request may use this share of the window; bigger transcripts go in parts.
REQUEST_SHARE = 0.75
#: Characters of one tool result kept in the transcript.
RESULT_CHARS = 1_500
#: A summary's reply limit (tokens): its own, never the person's `max_tokens`, which may be
#: too small for it; at most a quarter of the window.
SUMMARY_TOKENS = 4_096

#: The notice of a `/compact` whose summary would not make the request smaller.
LARGER = (
    "/compact: kept the conversation as it was: the summary would make the request larger "
    "(~{after:,} tokens) than the turns it replaces (~{before:,} tokens)"
)

Ask = Callable[[list[dict[str, Any]]], Awaitable[str]]


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
    usage: dict[str, int] = field(default_factory=dict)

    def supersede(self, earlier: dict[str, Any] | None) -> None:
        """Replace `earlier`, a compaction made before in the same turn (its summary is in
        this one): the size before is the first one's, and so is the focus unless a new one
        was given."""
        if earlier:
            self.before = int(earlier.get("before") or self.before)
            self.focus = self.focus or earlier.get("focus")

    def as_record(self) -> dict[str, Any]:
        """The `compaction` entry of a turn record."""
        entry: dict[str, Any] = {
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


def note(entry: dict[str, Any]) -> str:
    """The one line a person sees: `compacted 14 turns, 58k → 3k tokens` (or why not)."""
    n = int(entry.get("turns") or 0)
    turns = f"{n} turn" + ("" if n == 1 else "s")
    sizes = f"{short(int(entry.get('before') or 0))} → {short(int(entry.get('after') or 0))} tokens"
    if entry.get("failed"):
        return f"could not compact ({entry['failed']}): left out the oldest {turns}, {sizes}"
    return f"compacted {turns}, {sizes}"


def summary_messages(summary: str) -> list[dict[str, Any]]:
    """The summary as it is sent: a user message with a header, and a short acknowledgement."""
    return [
        {"role": "user", "content": f"{HEADER}\n\n{summary}"},
        {"role": "assistant", "content": ACK},
    ]


def split(
    turns: list[dict[str, Any]], sizes: list[int], keep: int, force: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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


def choose(
    turns: list[dict[str, Any]], sizes: list[int], before: int, window: int, focus: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`(oldest to compact, newest to keep)` for a request of `before` tokens whose history
    is `turns` (`sizes` tokens each): afterwards it should use `TARGET` of the window, with
    room for the summary. `focus` not None (`/compact`, or a forced compaction): `split`'s
    `force`."""
    fixed = before - sum(sizes)
    keep = int(TARGET * window) - fixed - window // 10  # room for the summary
    return split(turns, sizes, keep, force=focus is not None)


def transcript(turns: list[dict[str, Any]], limit: int) -> str:
    """The turns as plain text for the summary request, each text cut to stay under `limit`."""
    each = max(limit // max(3 * len(turns), 1), 200)
    parts = []
    for record in turns:
        lines = [f"## The person asked\n{_cut(str(record.get('prompt') or ''), each)}"]
        for round_ in record.get("rounds") or []:
            for call in round_.get("calls") or []:
                arguments = json.dumps(call.get("arguments") or {}, ensure_ascii=False)
                result = _cut(str(call.get("result") or ""), min(each, RESULT_CHARS))
                lines.append(f"- tool {call.get('name')} {_cut(arguments, 300)} → {result}")
        reply = str(record.get("reply") or "") or f"[no reply: {record.get('stop')}]"
        lines.append(f"## The agent answered\n{_cut(reply, each)}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def words(window: int) -> int:
    """How many words a summary may have for a window of `window` tokens."""
    return max(min(window // 20, 1_500), 100)


def summary_limit(window: int) -> int:
    """The reply limit of a summary request (tokens): room for `words(window)` words."""
    return max(min(SUMMARY_TOKENS, window // 4), words(window) * 2)


async def summarise(
    ask: Ask,
    turns: list[dict[str, Any]],
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


async def write_summary(
    entry: Compaction, ask: Ask, turns: list[dict[str, Any]], window: int, focus: str | None
) -> None:
    """Summarise `entry.summary` (the earlier summary) and `turns` into `entry.summary`.

    When the model cannot (an error, an empty or cut-off answer), `entry.failed` says why
    and the earlier summary stays: the turns are then left out, and the note says so.
    """
    try:
        entry.summary = await summarise(ask, turns, entry.summary, window, focus)
    except Exception as e:
        entry.failed = _reason(e)


def _reason(error: BaseException) -> str:
    """Why a summary failed, in one short line."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 160 else text[:159] + "…"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n… [{len(text) - limit} characters left out] …\n{text[-tail:]}"
