"""A conversation: the turn records of past turns, and the messages they become.

History policies:
- `replies` (default, as in elelem): each past turn is sent as its prompt and final reply.
- `full`: each past turn is sent with its rounds, tool calls and (recorded) results.

A turn whose request the server refused as too big (`context.refused` in its record) is
sent under either policy as its prompt cut short and a reply saying it did not fit: what
did not fit once must not make every later request fail too.

Turns replaced by a compaction (`agent/compaction.py`, stored in the record of the turn
that made it) are sent as its summary. Past that, only the newest turns that fit `budget`
characters are sent; the session sets the budget above its compaction point, so this is a
last guard, and `/context` shows what it leaves out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from elelem_kernel.agent.media import annotate
from elelem_kernel.agent.record import (
    CompactionEntry,
    RecordCall,
    RecordRound,
    TurnRecord,
    new_id,
)
from elelem_kernel.errors import BadInput, ConfigError
from elelem_kernel.events import AssistantMessage, Message, ToolCallEntry
from elelem_kernel.images import placeholder
from elelem_kernel.text import clip

HISTORY_POLICIES = ("replies", "full")
#: What a compaction's summary is called in later requests (a user message, never a system
#: one).
HEADER = "[Summary of the earlier conversation, written when it was compacted]"
ACK = "Understood: I will continue from this summary of our earlier conversation."
INTERRUPTED = "\n\n[interrupted by the person: this reply is incomplete]"
#: What a turn whose request the server refused as too big is sent as later: its prompt cut
#: to `REFUSED_PROMPT_CHARS`, no rounds, and this reply.
REFUSED = "[no reply: the request did not fit the model's context window, so it was left out]"
REFUSED_PROMPT_CHARS = 2_000


class Conversation:
    """An ordered list of turn records with one id."""

    def __init__(self, id: str | None = None, turns: list[TurnRecord] | None = None):
        self.id = id or new_id()
        self.turns: list[TurnRecord] = list(turns or [])
        self.forgotten: set[str] = set()

    def __len__(self) -> int:
        return len(self.turns)

    def add(self, record: TurnRecord) -> None:
        """Append a turn; a turn from a cell that already has one replaces it in place."""
        cell = record.get("cell")
        if cell:
            for i, old in enumerate(self.turns):
                if old.get("cell") == cell:
                    self.turns[i] = record
                    return
        self.turns.append(record)

    def forget(self, n: int) -> TurnRecord:
        """Leave turn `n` (1-based) out of what is sent to the model; return it."""
        if not 1 <= n <= len(self.turns):
            raise IndexError(f"there is no turn {n}: this conversation has {len(self.turns)}")
        record = self.turns[n - 1]
        self.forgotten.add(record["turn"])
        return record

    def active(self, cell: str | None = None) -> list[TurnRecord]:
        """Turns that are sent to the model (not forgotten, not undone).

        For a cell that already has a turn, only the turns before it: re-running a cell
        redoes its turn in place, so the model sees what came above it, not its own old
        answer or the turns of the cells below.
        """
        turns = self.turns
        if cell:
            place = next((i for i, t in enumerate(turns) if t.get("cell") == cell), None)
            if place is not None:
                turns = turns[:place]
        return [t for t in turns if t.get("turn") not in self.forgotten and not t.get("undone")]

    def compacted(
        self, turns: list[TurnRecord], pending: CompactionEntry | None = None
    ) -> tuple[str, list[TurnRecord]]:
        """`(summary, turns still sent)`: the newest compaction among `turns` (or `pending`,
        one being made now) replaces the turns up to the one it names."""
        entries = [pending] if pending else []
        entries += [
            t["compaction"] for t in reversed(turns) if isinstance(t.get("compaction"), dict)
        ]
        order = {t.get("turn"): i for i, t in enumerate(self.turns)}
        for entry in entries:
            upto = order.get(entry.get("upto"))
            if upto is None:
                continue  # the turn it names is gone from the notebook: ignore it
            kept = [t for t in turns if order.get(t.get("turn"), len(order)) > upto]
            return str(entry.get("summary") or ""), kept
        return "", turns

    def messages(
        self,
        policy: str = "replies",
        budget: int = 400_000,
        cell: str | None = None,
        pending: CompactionEntry | None = None,
    ) -> list[Message]:
        """The history as provider messages: the summary of compacted turns, then the newest
        turns that fill `budget` characters."""
        summary, turns = self.compacted(self.active(cell), pending)
        head = summary_messages(summary) if summary else []
        numbers = {str(t.get("turn")): n for n, t in enumerate(self.turns, 1)}
        return head + [m for part in _fit(turns, policy, budget, numbers) for m in part]

    def left_out(self, policy: str = "replies", budget: int = 400_000) -> int:
        """How many active turns are neither compacted nor sent: they do not fit the budget."""
        _, turns = self.compacted(self.active())
        return len(turns) - len(_fit(turns, policy, budget))


def summary_messages(summary: str) -> list[Message]:
    """The summary as it is sent: a user message with a header, and a short acknowledgement."""
    return [
        {"role": "user", "content": f"{HEADER}\n\n{summary}"},
        {"role": "assistant", "content": ACK},
    ]


def _fit(
    turns: list[TurnRecord], policy: str, budget: int, numbers: dict[str, int] | None = None
) -> list[list[Message]]:
    """The messages of the newest turns that fit `budget` characters (always the newest);
    `numbers`: each turn's number in its conversation, by turn id."""
    chosen: list[list[Message]] = []
    size = 0
    for record in reversed(turns):
        part = turn_messages(record, policy, (numbers or {}).get(str(record.get("turn"))))
        cost = sum(len(json.dumps(m, ensure_ascii=False)) for m in part)
        if chosen and size + cost > budget:
            break
        chosen.append(part)
        size += cost
    return chosen[::-1]


def turn_messages(
    record: TurnRecord, policy: str = "replies", number: int | None = None
) -> list[Message]:
    """One recorded turn (turn `number` of its conversation) as messages: the prompt, then
    the reply (or every round, its images as placeholders)."""
    if _refused(record):  # what did not fit once is not sent again
        prompt = clip(str(record.get("prompt", "")), REFUSED_PROMPT_CHARS)
        return [{"role": "user", "content": prompt}, {"role": "assistant", "content": REFUSED}]
    messages: list[Message] = [{"role": "user", "content": _prompt(record, number)}]
    marker = INTERRUPTED if record.get("stop") == "interrupted" else ""
    if policy == "full":
        for r, round_ in enumerate(record.get("rounds") or []):
            messages += _round_messages(round_, f"call_{record.get('turn')}_{r}", number)
        last = messages[-1]
        if last["role"] == "assistant" and not last.get("tool_calls") and last["content"]:
            last["content"] += marker
            return messages
    reply = (
        str(record.get("reply") or "") or f"[no reply: the turn ended with {record.get('stop')}]"
    )
    messages.append({"role": "assistant", "content": reply + marker})
    return messages


def _prompt(record: TurnRecord, number: int | None) -> str:
    """The recorded prompt as history sends it: its images (`prompt_images`) are not sent
    again, a placeholder line each says they were there."""
    prompt = str(record.get("prompt", ""))
    found = record.get("prompt_images")
    pictures = [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []
    return "\n".join([prompt, *(placeholder(i, number) for i in pictures)])


def _round_messages(round_: RecordRound, ids: str, number: int | None) -> list[Message]:
    """One recorded round as messages: the assistant's, then each call's result; a call
    without an id gets `{ids}_{i}`."""
    calls = round_.get("calls") or []
    named = [c.get("id") or f"{ids}_{i}" for i, c in enumerate(calls)]
    message: AssistantMessage = {"role": "assistant", "content": round_.get("text", "")}
    if calls:
        message["tool_calls"] = [_call_entry(i, c) for i, c in zip(named, calls, strict=True)]
    messages: list[Message] = [message]
    for call_id, c in zip(named, calls, strict=True):
        content = c.get("result") or "{}"
        found = c.get("images")
        pictures = [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []
        if pictures:  # an earlier turn's images are not sent again
            content = annotate(content, [placeholder(i, number) for i in pictures])
        messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
    return messages


def _call_entry(call_id: str, call: RecordCall) -> ToolCallEntry:
    """A recorded call as the assistant message carries it back. Arguments the record
    kept as cut JSON text (`record.bounded_arguments`) go as `{"_unparsed": text}`, the
    object a model's unparsable arguments become (`turn._arguments`), never as a string
    where every provider sends an object."""
    arguments = call.get("arguments")
    if not isinstance(arguments, dict):
        arguments = {"_unparsed": arguments} if arguments else {}
    return {"id": call_id, "name": call.get("name") or "", "arguments": arguments}


def _refused(record: TurnRecord) -> bool:
    """Whether the server refused the turn's last request as too big for the window."""
    context = record.get("context")
    return isinstance(context, dict) and context.get("refused") is True


class Conversations:
    """A session's conversations by id, the active one, and how they are sent."""

    def __init__(self, history: str = "replies") -> None:
        if history not in HISTORY_POLICIES:
            raise ConfigError(f"unknown history policy {history!r}; use replies or full")
        #: How the earlier turns are sent (`HISTORY_POLICIES`).
        self.history = history
        self.by_id: dict[str, Conversation] = {}
        self.active = self.new()
        #: `/compact [what to keep]` asked for: the next turn compacts first ("" no focus).
        self.compact_next: str | None = None

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_id)

    def __contains__(self, cid: object) -> bool:
        return cid in self.by_id

    def new(self) -> Conversation:
        """Start a fresh conversation and make it the active one."""
        self.active = Conversation()
        self.by_id[self.active.id] = self.active
        return self.active

    def use(self, cid: str) -> Conversation:
        """Make conversation `cid` the active one; BadInput naming the others if none."""
        if cid not in self.by_id:
            known = ", ".join(self.by_id) or "none"
            raise BadInput(f"no conversation {cid!r}; conversations: {known}")
        self.active = self.by_id[cid]
        return self.active

    def load(self, conversations: dict[str, list[TurnRecord]], active: str | None) -> None:
        """Replace the conversations with restored records; `active` (else the last) is
        the active one."""
        self.by_id = {cid: Conversation(cid, turns) for cid, turns in conversations.items()}
        if active in self.by_id:
            self.active = self.by_id[active]
        elif self.by_id:
            self.active = list(self.by_id.values())[-1]
        else:
            self.new()
