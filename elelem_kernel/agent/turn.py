"""The turn loop: one prompt driven through rounds of model calls and tool calls.

A turn runs rounds: send the messages, collect events, run the tool calls the model made
(asking for approval where needed), send the results, and repeat until the model answers
without a tool call, the round limit is hit, an error happens, or the person interrupts.
Every ending yields a turn record; the session stays usable after any of them.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from elelem_kernel.agent import media
from elelem_kernel.agent import usage as counts
from elelem_kernel.agent.approval import decide
from elelem_kernel.agent.blocks import BlockEvent, BlockLayout, CallState, Renderer, TurnEnd
from elelem_kernel.agent.budget import OverBudget, capped
from elelem_kernel.agent.context import THRESHOLD
from elelem_kernel.agent.fitting import (
    Sizing,
    bound_result,
    check_fixed,
    context_full,
    fits,
    result_room,
)
from elelem_kernel.agent.pricing import turn_cost
from elelem_kernel.agent.record import (
    DEPTH_LIMIT,
    CompactionEntry,
    Meter,
    TurnRecord,
    TurnRecorder,
    add_usage,
    bounded,
    deeper_than,
    fit,
)
from elelem_kernel.agent.toolbox import Call, finish
from elelem_kernel.errors import ConfigError, ContextOverflow, ElelemError
from elelem_kernel.events import (
    AssistantMessage,
    Doing,
    Message,
    Provider,
    ProviderEvent,
    Reported,
    ThinkingBlock,
    ToolCallEntry,
    ToolMessage,
    Usage,
    map_stop_reason,
)
from elelem_kernel.images import ImageEntry
from elelem_kernel.options import from_env
from elelem_kernel.redaction import redact
from elelem_kernel.store.record_format import COMPACTION_VERSION

if TYPE_CHECKING:
    from elelem_kernel.agent.accounts import Accounts
    from elelem_kernel.agent.approval import Grants
    from elelem_kernel.agent.compaction import Compaction
    from elelem_kernel.agent.conversation import Conversations
    from elelem_kernel.agent.front import TurnSettings
    from elelem_kernel.agent.model_facts import ModelFacts
    from elelem_kernel.agent.policy import Policy
    from elelem_kernel.tools.declaration import Arguments, ToolContext
    from elelem_kernel.tools.extras import TurnExtras


class TurnSession(Sizing, Protocol):
    """What a turn reads and settles into of its session (a `Session` is one): what
    sizes its requests (`fitting.Sizing`: model, toolbox, mode, messages), and more."""

    policy: Policy
    grants: Grants
    accounts: Accounts
    conversations: Conversations
    tool_context: ToolContext
    max_rounds: int


@dataclass
class TurnResult:
    """What a turn produced: the reply, how it ended, its tokens and its record."""

    reply: str
    stop: str
    usage: Usage
    record: TurnRecord
    error: str | None = None
    cost: float | None = None
    notices: list[str] = field(default_factory=list)


#: Why the calls of a reply cut off at the output limit were not run, and what to do.
CUT_OFF = (
    "not run: the reply was cut off at max_tokens (the model's output limit); raise it with "
    "-o max_tokens=N on the command line or in %%elelem, or /option max_tokens N"
)


@dataclass
class Reply:
    """What one model call sent back: its text, thinking, tool calls and how it ended."""

    number: int  #: the round's number, for the ids of calls that came without one
    calls: list[Call] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    thinking: list[ThinkingBlock] = field(default_factory=list)
    ending: dict[str, object] = field(default_factory=dict)  #: the `stop` event
    usage: Reported = field(default_factory=Reported)  #: the server's last `usage` event

    def take(self, event: ProviderEvent) -> ProviderEvent | None:
        """Keep a `doing`, `saying`, `thinking` or `stop` event; the event to record and
        show (a call with its parsed arguments and id), or None for any other."""
        if event["type"] == "doing":
            arguments = _arguments(event.get("arguments"))
            call_id = str(event.get("id") or f"call_{self.number}_{len(self.calls)}")
            metadata = event.get("metadata")
            self.calls.append(Call(call_id, str(event.get("name")), arguments, metadata=metadata))
            call: Doing = {**event, "id": call_id, "arguments": arguments}
            return call
        if event["type"] == "saying":
            self.text.append(str(event.get("text", "")))
        elif event["type"] == "thinking":
            piece: ThinkingBlock = {"text": str(event.get("text", ""))}
            if (metadata := event.get("metadata")) is not None:
                piece["metadata"] = metadata
            self.thinking.append(piece)
        elif event["type"] == "stop":
            self.ending.update(event)
        else:
            return None
        return event

    def stop(self) -> str:
        """How the round ended: `end_turn`, `tool_use`, `max_tokens` or `error`."""
        truncated = bool(self.ending.get("truncated"))
        reason = self.ending.get("reason")
        raw = reason if isinstance(reason, str) else None
        return map_stop_reason(raw, bool(self.calls), truncated)

    def message(self) -> AssistantMessage:
        """The assistant message that carries this reply into the next request."""
        message: AssistantMessage = {"role": "assistant", "content": "".join(self.text)}
        merged = _merge_thinking(self.thinking)
        if merged:
            message["thinking"] = merged
        if self.calls:
            message["tool_calls"] = []
            for c in self.calls:
                entry: ToolCallEntry = {"id": c.id, "name": c.name, "arguments": c.arguments}
                if c.metadata:
                    entry["metadata"] = c.metadata
                message["tool_calls"].append(entry)
        return message


class Turn:
    """One turn of a session: its output, layout, recorder, rounds, notices, compactions
    and meter, and the steps that fill them (prepare, round, call, ask)."""

    def __init__(
        self,
        session: TurnSession,
        prompt: str,
        renderer: Renderer | None,
        cell: str | None,
        settings: TurnSettings,
        extras: Mapping[str, object] | None = None,
        images: list[ImageEntry] | None = None,
    ) -> None:
        self.session = session
        self.prompt = prompt
        self.cell = cell
        self.prompt_images = list(images or [])  #: the prompt's own images, sent with it
        #: What the front brings to this turn: who approves, its hints, its environment.
        self.settings = settings
        #: Fields the record gets from the caller (a review's target); the tools add theirs.
        #: The front's fields for the record (a review's target), as the tools' extras.
        self.extras = cast("TurnExtras", dict(extras or {}))
        self.out = _safe(renderer)
        self.layout = BlockLayout(self.out)
        self.recorder = TurnRecorder(
            conversation=session.conversations.active.id,
            prompt=prompt,
            provider=session.facts.provider_name,
            model=session.facts.model,
            cell=cell,
        )
        if self.prompt_images:  # shown in the turn's output, kept there once (render/static.py)
            self.recorder.record["prompt_images"] = self.prompt_images
        self.rounds = 0
        self.notices: list[str] = []
        self.compactions: list[Compaction] = []
        #: The context meter of the last request sent (tokens used, window), or None.
        self.meter: Meter | None = None
        self.served: str | None = None  #: the model the server said answered
        #: The output cap the budgets allow the next request (None: no budget in force).
        self.cap: int | None = None
        #: The current round's usage as the server reported it (cleaned), None if it did not.
        self.reported: counts.Spent | None = None
        #: Whether any count of this turn is the session's estimate (`agent/usage.py`).
        self.estimated = False
        #: What a gateway reported the turn cost, and the usage of the requests it covers.
        self.gateway: tuple[float, Usage] | None = None
        #: The next request, and where this turn's own rounds start in it.
        self.messages: list[Message] = []
        self.head = 0
        self.stop = "end_turn"
        self.error: str | None = None
        self.refused = False  #: the server refused the turn's last request as too big

    async def run(self) -> TurnResult:
        """Run the turn to its end; returns normally on errors and on cancellation."""
        context = self.session.tool_context
        context.turn_id = self.recorder.record["turn"]  # what the tools mark their changes with
        context.live_notebook = self.settings.live_notebook
        context.turn_extras = self.extras
        self.session.accounts.ledger.start(
            self.recorder, self.compactions, self.settings.budget_hint
        )
        try:
            await self.loop()
        except asyncio.CancelledError:
            self.stop = "interrupted"
        except OverBudget as e:
            self.stop, self.error = "budget", str(e)
        except ContextOverflow as e:  # what it sent stays out of later requests
            self.stop, self.error, self.refused = "error", str(e), True
        except ElelemError as e:
            self.stop, self.error = "error", str(e)
        except Exception as e:
            self.stop, self.error = "error", f"{type(e).__name__}: {e}"
        finally:
            record = self.finish()
        return TurnResult(
            record["reply"],
            self.stop,
            record["usage"],
            record,
            self.error,
            record["cost"],
            self.notices,
        )

    async def loop(self) -> None:
        """Rounds until the model answers without a tool call or the round limit is hit.

        A request the server refuses as too big, before a word of its answer, is sent once
        more after compacting the older turns."""
        session = self.session
        if not self.prompt.strip():
            raise ConfigError("the prompt is empty: write a question or a task for the agent")
        await self.prepare()
        for notice in [*session.facts.take_notes(), *await session.toolbox.refresh()]:
            self.notice(notice)
        retried = False
        while True:
            if self.rounds == session.max_rounds:
                self.stop = "max_rounds"
                self.error = (
                    f"stopped after {session.max_rounds} rounds of tool calls (the round limit); "
                    "ask again to let the agent continue"
                )
                return
            if self.rounds:  # this turn's tool results may push the request past the threshold
                await self.prepare()
            self.cap = session.accounts.ledger.check(
                session.facts, self.messages, session.toolbox.specs(session.mode)
            )
            self.rounds += 1
            try:
                self.stop = await self.round()
            except ContextOverflow as e:
                if retried or not self.recorder.round_is_empty():
                    raise
                retried, self.rounds = True, self.rounds - 1
                self.recorder.rounds.pop()  # refused before a word: not a round
                session.facts.learn(e)  # the window the server stated, its count of the request
                self.notice(_refused(e))
                made = len(self.compactions)
                await self.prepare(force=True)
                if len(self.compactions) == made or not self.refit(self.compactions[-1]):
                    raise
                continue
            if self.stop != "tool_use":
                return

    def refit(self, entry: Compaction) -> bool:
        """Whether a request refused as too big is worth sending again after `entry`: its
        summary was written, or leaving out the oldest turns alone made it fit."""
        return not entry.failed or fits(entry.after, self.session.facts.window()[0])

    def notice(self, text: str) -> None:
        """Something the person must know, said once and kept in the record."""
        self.notices.append(text)
        self.out({"type": "notice", "text": text})

    def finish(self) -> TurnRecord:
        """End the turn in every case: close the blocks, complete and keep the record,
        count its tokens and cost, and tell the renderer (`turn_end`)."""
        session = self.session
        self.layout.close()
        if self.stop == "error" and self.rounds and self.recorder.round_is_empty():
            self.rounds -= 1  # nothing came back (a connection failure): not a round
            self.recorder.rounds.pop()
        record = self.recorder.finish(self.stop, self.error)
        for compaction in self.compactions:
            add_usage(record["usage"], compaction.usage)
        if self.rounds and self.meter is not None:
            record["context"] = self.meter.copy()
        if self.refused:
            record["context"] = {**record.get("context", {}), "refused": True}
        if factor := session.facts.calibration.get(session.conversations.active.id):
            record["calibration"] = round(factor, 4)  # restored with the conversation
        context = session.tool_context
        record.update(context.turn_extras)
        if record.get("changes"):  # before `fit`: a change cut to fit no longer verifies
            from elelem_kernel.store import signature  # lazy: only a turn that changed things

            record["signature"] = signature.sign(record)
        if self.notices:
            record["notices"] = self.notices
        if self.served and self.served != session.facts.model:
            record["served_model"] = self.served
        pictures = record.pop("prompt_images", None)
        fit(record)  # not the prompt's images: fitted already, their base64 must stay whole
        if pictures:
            record["prompt_images"] = pictures
        if self.estimated:
            record["usage_estimated"] = True
        row, source = session.facts.pricing()
        record["cost"], priced_by = turn_cost(row, source, record["usage"], self.gateway)
        if priced_by:
            record["priced_by"] = priced_by
        session.accounts.ledger.settle(session.facts, record)
        context.turn_extras, context.live_notebook = {}, None
        if self.prompt.strip():
            session.conversations.active.add(record)
        session.accounts.add(record, counted=bool(self.prompt.strip()))
        self.out(self.end_event(record))
        return record

    def end_event(self, record: TurnRecord) -> TurnEnd:
        """The `turn_end` the renderer gets: the record's totals and what it noted."""
        end: TurnEnd = {
            "type": "turn_end",
            "stop": self.stop,
            "usage": record["usage"],
            "rounds": self.rounds,
            "ms": record["ms"],
            "cost": record.get("cost"),
        }
        if "context" in record:
            end["context"] = record["context"]
        if "served_model" in record:
            end["served_model"] = record["served_model"]
        if "budget" in record:
            end["budget"] = record["budget"]
        if "usage_estimated" in record:
            end["usage_estimated"] = record["usage_estimated"]
        if "priced_by" in record:
            end["priced_by"] = record["priced_by"]
        if self.error:
            end["error"] = self.error
        return end

    # -- one round -----------------------------------------------------------------

    async def round(self) -> str:
        """One model call and the tool calls it asked for; returns the round's stop reason."""
        session = self.session
        self.recorder.start_round()
        reply = Reply(self.rounds)
        tools = session.toolbox.specs(session.mode)
        sent = await self.request(tools)
        self.reported, done = None, False
        try:
            provider = capped(session.facts.provider, self.cap)
            await _call_fetch(provider, sent, tools, partial(self.emit, reply))
            done = True
        finally:
            self.count(reply, done)
        stop = reply.stop()
        self.messages.append(reply.message())
        full = context_full(reply.ending, reply.usage, session.facts.known_window(), stop)
        if full:
            stop, self.error = "context_full", full
        if stop in ("max_tokens", "context_full") and reply.calls:
            self.not_run(reply.calls, f"not run: {full}" if full else CUT_OFF)
            return stop
        over = (
            session.accounts.ledger.over(session.facts, self.messages, tools)
            if stop == "tool_use"
            else None
        )
        if over:  # their results could not be sent: the calls are not run
            self.not_run(reply.calls, f"not run: over the {over}")
            raise OverBudget(over)
        if stop != "tool_use":
            self.layout.end_round()
            return stop
        for call in reply.calls:
            images = await self.call(call)
            message: ToolMessage = {
                "role": "tool",
                "tool_call_id": call.id,
                "content": json.dumps(call.result, ensure_ascii=False, default=str),
            }
            if images:  # providers that take images in tool results pass them on
                message["images"] = [dict(image) for image in images]
            self.messages.append(message)
        return stop

    async def request(self, tools: Sequence[Mapping[str, object]]) -> list[Message]:
        """The messages this round sends (images fitted to what the model takes), measured
        for the meter and announced to the renderer (`status`: waiting)."""
        session = self.session
        sent = self.messages
        if any(m.get("images") for m in sent):  # only then is the provider asked
            limit = {**from_env(), **session.facts.options}.get(media.LIMIT_OPTION)
            limit = media.MAX_PER_REQUEST if limit is None else media.parse_limit(limit)
            sent = media.for_request(sent, await session.facts.takes_images(), limit)
        self.meter = session.facts.measure(sent, tools)
        self.out(
            {
                "type": "status",
                "state": "waiting",
                "provider": session.facts.provider_name,
                "model": session.facts.model,
                "round": self.rounds,
                "context": self.meter.copy(),
            }
        )
        return sent

    def emit(self, reply: Reply, event: ProviderEvent) -> None:
        """One provider event: kept in `reply`, recorded and laid out as blocks; the usage
        event also calibrates the meter, the model event names the model that answered."""
        kind = event.get("type") if isinstance(event, dict) else None
        if not isinstance(kind, str):
            return  # a provider's stray value is no event
        if kind == "model":
            self.served = str(event.get("name") or "") or None
            return
        if kind == "usage":  # recorded when the round ends (`count`)
            reply.usage.update(event)
            self.reported = counts.cleaned(event)
            reported = self.reported.get("input")
            if isinstance(reported, int) and reported > 0 and self.meter is not None:
                self.meter["used"], self.meter["estimated"] = reported, False
                self.session.facts.calibrate(reported)
            return
        taken = reply.take(event)
        if taken is None:
            return
        self.recorder.event(taken)
        self.layout.event(taken)

    def count(self, reply: Reply, done: bool) -> None:
        """Record what the round spent: the server's counts, the session's estimates for
        the ones it did not give (`agent/usage.py`). A request refused or unanswered before
        a word of output spent nothing."""
        streamed = reply.text or reply.thinking or reply.calls
        if self.reported is None and not done and not streamed:
            return
        used = int((self.meter or {}).get("used") or 0)
        spent, estimated = counts.completed(self.reported, used, reply.message())
        self.take_cost(spent)
        self.estimated = self.estimated or estimated
        self.recorder.event({"type": "usage", **spent})

    def take_cost(self, spent: counts.Spent) -> None:
        """Keep the cost a gateway reported for a request (`spent["cost"]`), with its usage."""
        if "cost" in spent:
            dollars, covered = self.gateway or (0.0, Usage())
            self.gateway = (dollars + spent.pop("cost"), add_usage(covered, spent))

    # -- one call --------------------------------------------------------------------

    async def call(self, call: Call) -> list[ImageEntry]:
        """Resolve, approve and run one call, then show and record it; its images."""
        session, out = self.session, self.out
        index = self.layout.tool_index(call.id)
        problem = session.toolbox.resolve(call, session.mode)
        if problem is None:
            problem = await session.toolbox.prepare(call)
        state: CallState = "failed"
        if problem is None:
            problem, state = await decide(
                call,
                index,
                out,
                policy=session.policy,
                mode=session.mode,
                grants=session.grants,
                approver=self.settings.approver,
                allow_hint=self.settings.allow_hint,
            )
        if problem is None:
            out({"type": "tool_state", "index": index, "id": call.id, "state": "running"})
            try:
                await session.toolbox.run(call)
            except asyncio.CancelledError:
                call.result = finish({"error": "interrupted by the person"}, call.arguments)
                self.recorder.result(call.id, call.result, call.ms)
                raise
            state = "ok" if call.ok else "failed"
        else:
            call.result = finish({"error": problem}, call.arguments)
        images = await self.images(call)
        own = [*self.messages[:1], *self.messages[max(self.head - 1, 1) :]]
        room = result_room(session.facts, own, session.toolbox.specs(session.mode))
        call.result = bound_result(redact(call.result), room)
        out({"type": "tool_state", "index": index, "id": call.id, "state": state})
        self.recorder.result(call.id, call.result, call.ms, images)
        self.layout.tool_result(
            call.id, call.ok, json.dumps(call.result, ensure_ascii=False, default=str), images
        )
        return images

    async def images(self, call: Call) -> list[ImageEntry]:
        """The images of `call`'s result, fitted for a model in a worker thread (decoding
        and re-encoding large ones takes seconds); an interrupt stops it between images
        and keeps the result without them."""
        found = call.result.pop(media.KEY, None)
        if not isinstance(found, list):
            return []
        stop = threading.Event()
        try:
            kept, dropped = await asyncio.to_thread(media.fit_images, found, stop)
        except asyncio.CancelledError:
            stop.set()
            media.note(call.result, [], [media.INTERRUPTED])
            self.recorder.result(call.id, redact(call.result), call.ms)
            raise
        media.note(call.result, kept, dropped)
        return kept

    def not_run(self, calls: list[Call], why: str = CUT_OFF) -> None:
        """Calls shown and recorded but never run: a reply cut off at the output limit
        (`CUT_OFF`), or results the budget could not pay to send (`why` says which).

        A call made before the cut may still be whole, but the model did not finish what
        it meant to do; the one it was cut off in carries what arrived. Each gets a failed
        result that says so and how to raise the limit.
        """
        state: CallState = "over budget" if why.startswith("not run: over") else "not run"
        for call in calls:
            index = self.layout.tool_index(call.id)
            call.result = finish({"error": why}, call.arguments)
            self.out({"type": "tool_state", "index": index, "id": call.id, "state": state})
            self.recorder.result(call.id, call.result, 0)
            self.layout.tool_result(call.id, False, json.dumps(call.result, ensure_ascii=False))

    # -- the request's size --------------------------------------------------------

    async def prepare(self, force: bool = False) -> None:
        """Set the next request's messages and where this turn's own rounds start in them:
        the oldest turns are compacted first when the request would pass the threshold of
        the window (or `/compact` asked for it; `agent/compaction.py`). A second compaction
        in the same turn supersedes the first in the record (its summary includes the
        first). `force`: compact now (the server refused the request as too big)."""
        session = self.session
        tail = self.messages[self.head :]
        window = await session.facts.probe_window()  # first: a small window gets brief prompts
        check_fixed(session, self.settings.environment)
        if not self.messages:
            current = self.recorder.record.get("compaction")
            self.messages = self.request_messages(current)
        before = session.facts.estimate(self.messages, session.toolbox.specs(session.mode))
        asked = session.conversations.compact_next is not None
        focus = session.conversations.compact_next if asked or not force else ""
        if focus is not None or before > THRESHOLD * window:
            # compaction only once a conversation nears its window: not on most turns' path
            from elelem_kernel.agent.compaction import compact

            entry = await compact(self, before, window, focus, tail)
            if entry is not None:
                self.compactions.append(entry)
                self.recorder.record["compaction"] = entry.as_record()
                self.recorder.record["v"] = COMPACTION_VERSION
                self.out({"type": "compaction", **entry.as_record()})
        self.head = len(self.messages) - len(tail)

    @property
    def facts(self) -> ModelFacts:
        """The session's model."""
        return self.session.facts

    @property
    def conversations(self) -> Conversations:
        """The session's conversations."""
        return self.session.conversations

    def tools(self) -> Sequence[Mapping[str, object]]:
        """The tool specs this turn's requests send (the session's mode's)."""
        return self.session.toolbox.specs(self.session.mode)

    def request_messages(self, pending: CompactionEntry | None) -> list[Message]:
        """The session's messages for this turn's prompt, with its environment facts;
        `pending`: the compaction being made for this request."""
        return self.session.messages(
            self.prompt, self.cell, pending, self.prompt_images, self.settings.environment
        )

    async def ask(self, messages: list[Message], usage: Usage, limit: int) -> str:
        """One request without tools (a summary), its reply limited to `limit` tokens when
        the provider can be (not the person's max_tokens); its tokens are added to `usage`.
        A reply cut off at the limit is an error: a truncated summary would lose the rest."""
        session = self.session
        reply = Reply(0)
        counted: counts.Spent = {}

        def emit(event: ProviderEvent) -> None:
            if not isinstance(event, dict):
                return
            if event["type"] == "usage":
                counted.update(counts.cleaned(event))
            elif event["type"] in ("saying", "stop"):
                reply.take(event)

        session.accounts.ledger.check(session.facts, messages, [])
        await _call_fetch(session.facts.provider.limited(limit), messages, [], emit)
        spent, estimated = counts.completed(
            counted, session.facts.estimate(messages), reply.message()
        )
        self.take_cost(spent)
        self.estimated = self.estimated or estimated
        add_usage(usage, spent)
        if reply.stop() == "max_tokens":
            raise ValueError(
                f"the model's summary was cut off at its output limit ({limit:,} tokens)"
            )
        return "".join(reply.text)


def _refused(error: ContextOverflow) -> str:
    """The notice of a request the server refused as too big for the context window."""
    counted = f" of {error.requested:,} tokens" if error.requested else ""
    window = (
        f"its context window is {error.limit:,} tokens"
        if error.limit
        else "it does not fit the model's context window"
    )
    return (
        f"the server refused the request{counted}: {window}; compacting the older turns "
        "and sending it once more"
    )


async def _call_fetch(
    provider: Provider,
    messages: list[Message],
    tools: list[dict[str, Any]],
    emit: Callable[[ProviderEvent], None],
) -> None:
    """One `fetch` of the provider, `async def` or a plain `def` (run in a worker thread)."""
    fetch = provider.fetch
    result: Awaitable[None] | None
    if inspect.iscoroutinefunction(fetch):
        result = fetch(messages, tools, emit)
    else:
        result = await asyncio.to_thread(fetch, messages, tools, emit)
    if inspect.isawaitable(result):
        await result


def _arguments(value: object) -> Arguments:
    """Tool arguments as a dict: JSON text is parsed, empty or missing means `{}`.

    Containers nested past `DEPTH_LIMIT` become a marker string (the schema check then
    refuses them): hundreds of levels would break every recursive step after this one.
    """
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {"_unparsed": value}
    if deeper_than(value, DEPTH_LIMIT):
        value = bounded(value, DEPTH_LIMIT, limit=None)
    return value if isinstance(value, dict) else {"_value": value}


def _merge_thinking(parts: list[ThinkingBlock]) -> list[ThinkingBlock]:
    """Join streamed thinking pieces into blocks; a piece with metadata closes its block."""
    blocks: list[ThinkingBlock] = []
    texts: list[str] = []  # the open block's pieces, joined once when it closes
    for part in parts:
        texts.append(part["text"])
        if part.get("metadata"):
            blocks.append({"text": "".join(texts), "metadata": part["metadata"]})
            texts = []
    if texts:
        blocks.append({"text": "".join(texts)})
    return [b for b in blocks if b["text"] or b.get("metadata")]


def _safe(renderer: Renderer | None) -> Renderer:
    """A renderer that can fail without ending the turn."""
    if renderer is None:
        return lambda event: None

    def out(event: BlockEvent) -> None:
        try:
            renderer(event)
        except Exception:
            logging.getLogger("elelem_kernel").exception("renderer failed on %s", event.get("type"))

    return out
