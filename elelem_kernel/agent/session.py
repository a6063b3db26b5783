"""The session: one conversation with one model, and the turn loop that drives it.

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
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent import media, system_prompt
from elelem_kernel.agent.approval import (
    HOW_TO_ALLOW,
    NO_CHANNEL,
    SENSITIVE_DECLINED,
    ApprovalRequest,
    Approver,
)
from elelem_kernel.agent.blocks import BlockLayout
from elelem_kernel.agent.budget import Ledger, OverBudget
from elelem_kernel.agent.commands import Commands, add_builtin_commands
from elelem_kernel.agent.compaction import TARGET, Compaction, split, summarise, summary_limit
from elelem_kernel.agent.context import (
    CHARS_PER_TOKEN,
    ENV,
    OPTION,
    THRESHOLD,
    calibration,
    estimate,
    known,
    resolve_window,
    short,
)
from elelem_kernel.agent.conversation import HISTORY_POLICIES, Conversation, turn_messages
from elelem_kernel.agent.media import take_images
from elelem_kernel.agent.pricing import cost
from elelem_kernel.agent.record import (
    COMPACTION_VERSION,
    DEPTH_LIMIT,
    TurnRecorder,
    add_usage,
    bounded,
    deeper_than,
    fit,
)
from elelem_kernel.agent.registry import ProviderCatalog
from elelem_kernel.agent.sync import run_sync
from elelem_kernel.agent.toolbox import Call, Tool, Toolbox, check_mode, finish
from elelem_kernel.errors import ConfigError, ContextOverflow, ElelemError
from elelem_kernel.events import map_stop_reason
from elelem_kernel.options import from_env
from elelem_kernel.redaction import redact
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.mcp.attachment import McpTools

Renderer = Callable[[dict[str, Any]], None]


@dataclass
class TurnResult:
    """What a turn produced: the reply, how it ended, its tokens and its record."""

    reply: str
    stop: str
    usage: dict[str, int]
    record: dict[str, Any]
    error: str | None = None
    cost: float | None = None
    notices: list[str] = field(default_factory=list)


#: Why the calls of a reply cut off at the output limit were not run, and what to do.
CUT_OFF = (
    "not run: the reply was cut off at max_tokens (the model's output limit); raise it with "
    "-o max_tokens=N on the command line or in %%elelem, or /option max_tokens N"
)


class Session:
    """A provider, a toolbox and the conversations of one notebook or terminal."""

    def __init__(
        self,
        provider: Any,
        toolbox: Toolbox | None = None,
        commands: Commands | None = None,
        *,
        providers: ProviderCatalog | None = None,
        provider_name: str = "custom",
        model: str | None = None,
        mode: str = "build",
        history: str = "replies",
        system_prompt: str | None = None,
        workspace: Path | str | None = None,
        namespace: dict[str, Any] | None = None,
        approver: Approver | None = None,
        allow: tuple[str, ...] | list[str] = (),
        max_rounds: int = 25,
    ):
        if history not in HISTORY_POLICIES:
            raise ConfigError(f"unknown history policy {history!r}; use replies or full")
        self.provider = provider
        #: Where `set_provider` makes providers by name (the registry, handed in by the
        #: composition root); None: this session keeps the provider it was given.
        self.providers = providers
        self.provider_name = provider_name
        #: The options the person gave each provider (-o, /option), by provider name.
        self.provider_options: dict[str, dict[str, Any]] = {}
        self.model = model if model is not None else getattr(provider, "model", None)
        self.toolbox = toolbox if toolbox is not None else Toolbox()
        #: The configured MCP servers' side of this session (the "mcp" setup), or None.
        self.mcp: McpTools | None = None
        if commands is None:
            commands = Commands()
            add_builtin_commands(commands)
        self.commands = commands
        self.mode = mode
        self.history = history
        self.system_prompt = system_prompt
        self.workspace = Path(workspace or Path.cwd()).resolve()
        self.namespace: dict[str, Any] = namespace if namespace is not None else {}
        self.approver = approver
        self.allow = set(allow)
        #: What a declined call tells the person to do (a front sets its own words).
        self.allow_hint = HOW_TO_ALLOW["cli"]
        self.always: set[str] = set()
        self.max_rounds = max_rounds
        self.open_notebook: Path | None = None
        self.propose_cell: Callable[[str], None] = _print_cell
        #: The front's link to the notebook open in the frontend for this turn (the
        #: notebook tools without path act on it), or None.
        self.live_notebook: Any = None
        #: Lines the front adds to the system prompt's environment facts.
        self.environment: list[str] = []
        self.turn_id: str | None = None
        #: Fields the next turn adds to its record (a review's target, its findings); cleared
        #: when the turn ends.
        self.turn_extras: dict[str, Any] = {}
        self.notice: str | None = None
        self.conversation = Conversation()
        self.conversations: dict[str, Conversation] = {self.conversation.id: self.conversation}
        self.usage: dict[str, int] = {}
        self.cost: float | None = 0.0
        #: The budgets in force and what they count (`agent/budget.py`).
        self.ledger = Ledger.from_env()
        self.turns = 0
        #: The window set with `/context-window` (tokens); None: see `agent/context.py`.
        self.context_window: int | None = None
        #: `/compact [what to keep]` asked for: the next turn compacts first ("" no focus).
        self.compact_next: str | None = None
        self._probed: tuple[Any, int | None] | None = None
        #: The window a server stated when it refused a request as too big, by provider.
        self._learned: tuple[Any, int] | None = None
        #: The server's count / the estimate, by conversation id (`context.calibration`).
        self.calibration: dict[str, float] = {}
        self._vision: tuple[Any, bool] | None = None  # what the provider said, per provider
        self._request: dict[str, Any] | None = None  # the meter of the last request sent
        self._raw = 0  # the uncalibrated estimate of the last request sent
        self._served: str | None = None  # the model the server said answered this turn

    @property
    def mode(self) -> str:
        """Which kinds of tool are offered (toolbox.MODES); checked on every change."""
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        self._mode = check_mode(mode)

    def __repr__(self) -> str:
        return (
            f"<Session provider={self.provider_name} model={self.model} mode={self.mode} "
            f"turns={len(self.conversation)}>"
        )

    # -- conversations -------------------------------------------------------------

    def new_conversation(self) -> Conversation:
        """Start a fresh conversation and make it the active one."""
        self.conversation = Conversation()
        self.conversations[self.conversation.id] = self.conversation
        return self.conversation

    def load(self, conversations: dict[str, list[dict[str, Any]]], active: str | None) -> None:
        """Replace the conversations with restored records; nothing is executed."""
        self.conversations = {cid: Conversation(cid, turns) for cid, turns in conversations.items()}
        self.ledger.restore(conversations)
        if active in self.conversations:
            self.conversation = self.conversations[active]
        elif self.conversations:
            self.conversation = list(self.conversations.values())[-1]
        else:
            self.new_conversation()

    def messages(
        self, prompt: str, cell: str | None = None, pending: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """What a request for `prompt` (from `cell`) sends: system prompt, history, prompt.

        `pending`: a compaction being made for this request, applied to the history.
        """

        system = system_prompt.build(self.workspace, self.system_prompt)
        if self.environment:
            system += "\n" + "\n".join(self.environment)
        budget = self.window()[0] * CHARS_PER_TOKEN  # compaction comes well before this
        history = self.conversation.messages(self.history, budget, cell, pending)
        return [
            {"role": "system", "content": system},
            *history,
            {"role": "user", "content": prompt},
        ]

    # -- providers and commands -----------------------------------------------------

    @property
    def options(self) -> dict[str, Any]:
        """The options the person gave the current provider (ELELEM_OPTIONS not included)."""
        return self.provider_options.get(self.provider_name, {})

    def set_provider(
        self, name: str, model: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        """Switch provider (and model); the conversation is kept.

        The provider gets ELELEM_OPTIONS, then `options` (default: the ones it had before
        in this session); nothing changes when the provider refuses them.
        """
        chosen = dict(self.provider_options.get(name, {}) if options is None else options)
        if self.providers is None:
            raise ConfigError(
                f"cannot switch to {name!r}: this session was made without a registry"
            )
        self.provider = self.providers.create_with_env(name, model, chosen)
        self.provider_name = name
        self.provider_options[name] = chosen
        self.model = model if model is not None else getattr(self.provider, "model", None)

    def set_option(self, name: str, value: Any = None) -> None:
        """Set option `name` of the current provider (None: back to its default)."""
        chosen = dict(self.options)
        if value is None:
            chosen.pop(name, None)
        else:
            chosen[name] = value
        self.set_provider(self.provider_name, self.model, chosen)

    def window(self) -> tuple[int, str]:
        """The model's context window in tokens, and where that number comes from."""

        reported = self._probed[1] if self._probed and self._probed[0] is self.provider else None
        learned = self._learned[1] if self._learned and self._learned[0] is self.provider else None
        return resolve_window(
            override=self.context_window,
            options={**from_env(), **self.options},
            provider_name=self.provider_name,
            model=self.model,
            reported=reported,
            learned=learned,
            official=self.official,
        )

    @property
    def official(self) -> bool:
        """Whether the provider talks to its vendor's own endpoint, where a model's name
        has a known window and price (providers that do not say are taken at their word)."""
        return bool(getattr(self.provider, "official", True))

    def estimate(self, messages: list[dict[str, Any]], tools: list | None = None) -> int:
        """The estimated tokens of a request, scaled by what the server counted for this
        conversation's earlier requests."""
        factor = self.calibration.get(self.conversation.id, 1.0)
        return int(estimate(messages, tools) * factor + 0.5)

    def price_model(self) -> str | None:
        """The model name to price (`agent/pricing.py`): None away from the official
        endpoint, where a name such as `gpt-4.1` says nothing about what it costs."""
        return self.model if self.official else None

    def provider_names(self) -> list[str]:
        """The providers `set_provider` can switch to."""
        return self.providers.provider_names() if self.providers else [self.provider_name]

    @contextmanager
    def overridden(
        self,
        *,
        mode: str | None = None,
        tools: Iterable[Tool] | None = None,
        provider: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> Iterator[Session]:
        """For the `with` block only: another mode, provider or model (with `options` on top
        of the ones it has), system prompt, or tools.

        Everything is put back on the way out, after an error or an interrupt too: the
        provider, its options, model, mode and system prompt as they were, the `tools`
        removed and any tool of the same name they replaced restored. The conversation is
        kept.
        """
        saved = (self.provider, self.provider_name, self.model, self.mode, self.system_prompt)
        saved_options = {k: dict(v) for k, v in self.provider_options.items()}
        added = list(tools or ())
        box = self.toolbox
        replaced = [box.tools[t.name] for t in added if t.name in box.tools]
        try:
            if provider or model or options:
                name = provider or self.provider_name
                if model is None and not provider:
                    model = self.model
                merged = {**self.provider_options.get(name, {}), **(options or {})}
                self.set_provider(name, model, merged)
            if mode:
                self.mode = mode
            if system_prompt is not None:
                self.system_prompt = system_prompt
            for tool in added:
                box.put(tool)
            yield self
        finally:
            self.provider, self.provider_name, self.model, self.mode, self.system_prompt = saved
            self.provider_options = saved_options
            for tool in added:
                box.remove(tool.name)
            for tool in replaced:
                box.put(tool)

    def command(self, line: str) -> str:
        """Run a slash command line and return its Markdown answer."""
        return self.commands.run(self, line)

    # -- the turn ---------------------------------------------------------------------

    def run(
        self,
        prompt: str,
        renderer: Renderer | None = None,
        cell: str | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> TurnResult:
        """Run a turn to the end from synchronous code; Ctrl-C ends it as interrupted.

        With no `loop` a private one is made and closed after the provider's connections.
        Works inside a running event loop too (agent/sync.py).
        """
        return run_sync(
            lambda: self.turn(prompt, renderer=renderer, cell=cell),
            loop=loop,
            close=self.aclose,
            interrupt="result",
        )

    async def aclose(self) -> None:
        """Close the provider's connections (call it on the loop that opened them)."""
        aclose = getattr(self.provider, "aclose", None)
        if aclose is not None:
            await aclose()

    def close(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the provider's connections on `loop` (the one that opened them), then it."""
        try:
            loop.run_until_complete(self.aclose())
        finally:
            loop.close()

    async def turn(
        self, prompt: str, renderer: Renderer | None = None, cell: str | None = None
    ) -> TurnResult:
        """Run one turn for `prompt`; returns normally on errors and on cancellation."""
        out = _safe(renderer)
        layout = BlockLayout(out)
        recorder = TurnRecorder(
            conversation=self.conversation.id,
            prompt=prompt,
            provider=self.provider_name,
            model=self.model,
            cell=cell,
        )
        self.turn_id = recorder.record["turn"]  # what the tools mark their changes with
        stop, error = "end_turn", None
        rounds = 0
        notices: list[str] = []
        compactions: list[Compaction] = []
        self._request = None
        self.ledger.start(recorder, compactions)
        self._served = None
        retried = False
        try:
            if not prompt.strip():
                raise ConfigError("the prompt is empty: write a question or a task for the agent")
            messages, head = await self._prepare(prompt, cell, out, recorder, compactions)
            for notice in await self.toolbox.refresh():
                notices.append(notice)
                out({"type": "notice", "text": notice})
            while True:
                if rounds == self.max_rounds:
                    stop = "max_rounds"
                    error = (
                        f"stopped after {self.max_rounds} rounds of tool calls (the round limit); "
                        "ask again to let the agent continue"
                    )
                    break
                if rounds:  # this turn's tool results may push the request past the threshold
                    tail = messages[head:]
                    messages, head = await self._prepare(
                        prompt, cell, out, recorder, compactions, messages, tail
                    )
                self.ledger.check(self, messages, self.toolbox.specs(self.mode))
                rounds += 1
                try:
                    stop = await self._round(messages, layout, recorder, out, rounds)
                except ContextOverflow as e:
                    if retried or recorder.rounds[-1] != _EMPTY_ROUND:
                        raise
                    retried, rounds = True, rounds - 1
                    recorder.rounds.pop()  # refused before a word: not a round
                    notice = self._overflowed(e)
                    notices.append(notice)
                    out({"type": "notice", "text": notice})
                    made = len(compactions)
                    tail = messages[head:]
                    messages, head = await self._prepare(
                        prompt, cell, out, recorder, compactions, messages, tail, force=True
                    )
                    if len(compactions) == made or compactions[-1].failed:
                        raise
                    continue
                if stop != "tool_use":
                    break
        except asyncio.CancelledError:
            stop = "interrupted"
        except OverBudget as e:
            stop, error = "budget", str(e)
        except ElelemError as e:
            stop, error = "error", str(e)
        except Exception as e:
            stop, error = "error", f"{type(e).__name__}: {e}"
        finally:
            layout.close()
            record = recorder.finish(stop, error)
            for compaction in compactions:
                add_usage(record["usage"], compaction.usage)
            if rounds and self._request is not None:
                record["context"] = dict(self._request)
            record.update(self.turn_extras)
            if notices:
                record["notices"] = notices
            if self._served and self._served != self.model:
                record["served_model"] = self._served
            fit(record)
            record["cost"] = cost(self.provider_name, self.price_model(), record["usage"])
            self.ledger.settle(self, record)
            self.turn_extras = {}
            if prompt.strip():
                self.conversation.add(record)
                self.turns += 1
            add_usage(self.usage, record["usage"])
            if self.cost is not None:
                self.cost = None if record["cost"] is None else self.cost + record["cost"]
            end = {"type": "turn_end", "stop": stop, "usage": record["usage"], "rounds": rounds}
            end["ms"] = record["ms"]
            end["cost"] = record["cost"]
            for key in ("context", "served_model", "budget"):
                if key in record:
                    end[key] = record[key]
            if error:
                end["error"] = error
            out(end)
        return TurnResult(
            record["reply"], stop, record["usage"], record, error, record["cost"], notices
        )

    async def _round(
        self,
        messages: list[dict[str, Any]],
        layout: Any,
        recorder: TurnRecorder,
        out: Renderer,
        number: int,
    ) -> str:
        """One model call and the tool calls it asked for; returns the round's stop reason."""
        recorder.start_round()
        calls: list[Call] = []
        text: list[str] = []
        thinking: list[dict[str, Any]] = []
        ending: dict[str, Any] = {}

        def emit(event: dict[str, Any]) -> None:
            kind = event.get("type") if isinstance(event, dict) else None
            if kind == "doing":
                event = {**event, "arguments": _arguments(event.get("arguments"))}
                call_id = str(event.get("id") or f"call_{number}_{len(calls)}")
                calls.append(
                    Call(
                        call_id,
                        str(event.get("name")),
                        event["arguments"],
                        metadata=event.get("metadata"),
                    )
                )
                event["id"] = call_id
            elif kind == "saying":
                text.append(str(event.get("text", "")))
            elif kind == "thinking":
                thinking.append(
                    {"text": str(event.get("text", "")), "metadata": event.get("metadata")}
                )
            elif kind == "stop":
                ending.update(event)
            elif kind == "usage":
                reported = event.get("input")
                if isinstance(reported, int) and reported > 0 and self._request is not None:
                    self._request.update(used=reported, estimated=False)
                    factor = calibration(reported, self._raw)
                    if factor is not None:
                        self.calibration[self.conversation.id] = factor
            elif kind == "model":
                self._served = str(event.get("name") or "") or None
                return
            else:
                return
            recorder.event(event)
            layout.event(event)

        tools = self.toolbox.specs(self.mode)
        pictures = any(m.get("images") for m in messages)  # only then is the provider asked
        if pictures:
            limit = {**from_env(), **self.options}.get(media.LIMIT_OPTION)
            limit = media.MAX_PER_REQUEST if limit is None else media.parse_limit(limit)
            sent = media.for_request(messages, await self.takes_images(), limit)
        else:
            sent = messages
        self._raw = estimate(sent, tools)
        window, source = self.window()
        self._request = {"used": self.estimate(sent, tools), "window": window}
        self._request["estimated"] = True
        if not known(source):
            self._request["assumed"] = True
        out(
            {
                "type": "status",
                "state": "waiting",
                "provider": self.provider_name,
                "model": self.model,
                "round": number,
                "context": dict(self._request),
            }
        )
        await _call_fetch(self.provider, sent, tools, emit)

        stop = map_stop_reason(ending.get("reason"), bool(calls), bool(ending.get("truncated")))
        messages.append(_assistant_message("".join(text), calls, thinking))
        if stop == "max_tokens" and calls:
            self._not_run(calls, layout, recorder, out)  # the round ends on their cards
            return stop
        over = self.ledger.over(self, messages, tools) if stop == "tool_use" else None
        if over:  # their results could not be sent: the calls are not run
            self._not_run(calls, layout, recorder, out, f"not run: over the {over}")
            raise OverBudget(over)
        if stop != "tool_use":
            layout.end_round()
            return stop
        for call in calls:
            images = await self._run_call(call, layout, recorder, out)
            message: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": call.id,
                "content": json.dumps(call.result, ensure_ascii=False, default=str),
            }
            if images:  # providers that take images in tool results pass them on
                message["images"] = images
            messages.append(message)
        return stop

    async def _prepare(
        self,
        prompt: str,
        cell: str | None,
        out: Renderer,
        recorder: TurnRecorder,
        compactions: list[Compaction],
        messages: list[dict[str, Any]] | None = None,
        tail: list[dict[str, Any]] | None = None,
        force: bool = False,
    ) -> tuple[list[dict[str, Any]], int]:
        """The next request's messages and where this turn's own rounds (`tail`) start in
        them: the oldest turns are compacted first when the request would pass the
        threshold of the window (or `/compact` asked for it). A second compaction in the
        same turn supersedes the first in the record (its summary includes the first).
        `force`: compact now (the server refused the request as too big)."""

        tail = tail or []
        current = recorder.record.get("compaction")
        tools = self.toolbox.specs(self.mode)
        if messages is None:
            messages = self.messages(prompt, cell, current)
        before = self.estimate(messages, tools)
        window = await self._probe_window()
        asked = self.compact_next is not None
        focus = self.compact_next if asked or not force else ""
        if focus is None and before <= THRESHOLD * window:
            return messages, len(messages) - len(tail)
        active = self.conversation.active(cell)
        summary, turns = self.conversation.compacted(active, current)
        if not turns:
            return messages, len(messages) - len(tail)
        self.compact_next = None
        sizes = [self.estimate(turn_messages(t, self.history)) for t in turns]
        fixed = before - sum(sizes)
        keep = int(TARGET * window) - fixed - window // 10  # room for the summary
        old, kept = split(turns, sizes, keep, force=focus is not None)
        # The summary replaces every active turn up to the newest one it covers, the ones
        # an earlier summary covered included: that is the count a person reads.
        covered = len(active) - len(kept)
        entry = Compaction(old[-1]["turn"], covered, "", before, focus=focus or None)
        if current:
            entry.before = int(current.get("before") or before)
            entry.focus = entry.focus or current.get("focus")
        out(
            {
                "type": "status",
                "state": "compacting",
                "turns": len(old),
                "provider": self.provider_name,
                "model": self.model,
            }
        )
        try:
            limit = summary_limit(window)
            entry.summary = await summarise(
                lambda request: self._ask(request, entry.usage, limit), old, summary, window, focus
            )
        except asyncio.CancelledError:
            raise
        except Exception as e:
            entry.failed = _reason(e)
        if entry.failed:
            entry.summary = summary
        compacted = self.messages(prompt, cell, entry.as_record()) + tail
        entry.after = self.estimate(compacted, tools)
        if asked and not entry.failed and entry.after >= before:
            out({"type": "notice", "text": _LARGER.format(after=entry.after, before=before)})
            return messages, len(messages) - len(tail)
        messages = compacted
        if not entry.failed and entry.after > THRESHOLD * window:
            entry.failed = f"the summary is still too large, ~{short(entry.after)} tokens"
            entry.summary = summary
            messages = self.messages(prompt, cell, entry.as_record()) + tail
            entry.after = self.estimate(messages, tools)
        compactions.append(entry)
        recorder.record["compaction"] = entry.as_record()
        recorder.record["v"] = COMPACTION_VERSION
        out({"type": "compaction", **entry.as_record()})
        return messages, len(messages) - len(tail)

    async def _ask(self, messages: list[dict[str, Any]], usage: dict[str, int], limit: int) -> str:
        """One request without tools (a summary), its reply limited to `limit` tokens when
        the provider can be (not the person's max_tokens); its tokens are added to `usage`.
        A reply cut off at the limit is an error: a truncated summary would lose the rest."""
        parts: list[str] = []
        counted: dict[str, Any] = {}
        ending: dict[str, Any] = {}

        def emit(event: dict[str, Any]) -> None:
            if not isinstance(event, dict):
                return
            if event.get("type") == "saying":
                parts.append(str(event.get("text", "")))
            elif event.get("type") == "usage":
                counted.update(event)
            elif event.get("type") == "stop":
                ending.update(event)

        self.ledger.check(self, messages, [])
        limited = getattr(self.provider, "limited", None)
        provider = limited(limit) if callable(limited) else self.provider
        await _call_fetch(provider, messages, [], emit)
        add_usage(usage, counted)
        if map_stop_reason(ending.get("reason"), False, bool(ending.get("truncated"))) == (
            "max_tokens"
        ):
            raise ValueError(
                f"the model's summary was cut off at its output limit ({limit:,} tokens)"
            )
        return "".join(parts)

    def _overflowed(self, error: ContextOverflow) -> str:
        """Learn from a server's context-overflow refusal: the window it stated, and its
        count of the request for this conversation's estimates. The notice to show."""
        if error.limit:
            self._learned = (self.provider, error.limit)
        if error.requested:
            factor = calibration(error.requested, self._raw)
            if factor is not None:
                self.calibration[self.conversation.id] = factor
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

    async def takes_images(self) -> bool:
        """Whether the model is sent images: the option `vision` (`-o vision=off`), else
        what the provider says (`takes_images()`: Ollama's capabilities, llm's attachment
        types; asked once per provider), else the models known to (`media.known_vision`)."""
        chosen = {**from_env(), **self.options}.get(media.OPTION)
        if chosen is not None:
            return media.parse_vision(chosen)
        if self._vision is not None and self._vision[0] is self.provider:
            return self._vision[1]
        answer = await _ask_provider(self.provider, "takes_images")
        if not isinstance(answer, bool):
            answer = media.known_vision(self.provider_name, self.model)
        self._vision = (self.provider, answer)
        return answer

    async def _probe_window(self) -> int:
        """The window; asks the provider for its own (once per provider) when no setting
        names one: a local server's window is only known by asking it."""

        probe = getattr(self.provider, "context_window", None)
        named = self.context_window or OPTION in {**from_env(), **self.options}
        if (
            callable(probe)
            and not named
            and not os.environ.get(ENV, "").strip()
            and not (self._probed and self._probed[0] is self.provider)
        ):
            value = await _ask_provider(self.provider, "context_window")
            self._probed = (self.provider, value if isinstance(value, int) and value > 0 else None)
        return self.window()[0]

    def _not_run(
        self,
        calls: list[Call],
        layout: Any,
        recorder: TurnRecorder,
        out: Renderer,
        why: str = CUT_OFF,
    ) -> None:
        """Calls shown and recorded but never run: a reply cut off at the output limit
        (`CUT_OFF`), or results the budget could not pay to send (`why` says which).

        A call made before the cut may still be whole, but the model did not finish what
        it meant to do; the one it was cut off in carries what arrived. Each gets a failed
        result that says so and how to raise the limit.
        """
        state = "not run" if why == CUT_OFF else "over budget"
        for call in calls:
            index = layout.tool_index(call.id)
            call.result = finish({"error": why}, call.arguments)
            out({"type": "tool_state", "index": index, "id": call.id, "state": state})
            recorder.result(call.id, call.result, 0)
            layout.tool_result(call.id, False, json.dumps(call.result, ensure_ascii=False))

    async def _run_call(
        self, call: Call, layout: Any, recorder: TurnRecorder, out: Renderer
    ) -> list[dict[str, str]]:
        """Resolve, approve and run one call, then show and record it; its images."""
        index = layout.tool_index(call.id)
        problem = self.toolbox.resolve(call, self.mode)
        state = "failed"
        if problem is None:
            problem, state = await self._approval(call, index, out)
        if problem is None:
            out({"type": "tool_state", "index": index, "id": call.id, "state": "running"})
            try:
                await self.toolbox.run(call)
            except asyncio.CancelledError:
                call.result = finish({"error": "interrupted by the person"}, call.arguments)
                recorder.result(call.id, call.result, call.ms)
                raise
            state = "ok" if call.ok else "failed"
        else:
            call.result = finish({"error": problem}, call.arguments)
        images = take_images(call.result)
        call.result = redact(call.result)
        out({"type": "tool_state", "index": index, "id": call.id, "state": state})
        recorder.result(call.id, call.result, call.ms, images)
        layout.tool_result(
            call.id, call.ok, json.dumps(call.result, ensure_ascii=False, default=str), images
        )
        return images

    async def _approval(
        self, call: Call, index: int | None, out: Renderer
    ) -> tuple[str | None, str]:
        """None when the call may run, else why not and the card state."""
        tool = call.tool
        assert tool is not None
        if tool.kind == "read" or self.mode == "auto" or tool.asks_person(call.arguments):
            return None, "running"
        why = tool.caution(call.arguments)
        if why is None and tool.name in self.always | self.allow:
            return None, "running"
        if self.approver is None:
            if why is not None:
                return SENSITIVE_DECLINED.format(why=why), "declined"
            how = self.allow_hint.format(name=tool.name)
            return NO_CHANNEL.format(kind=tool.kind, how=how), "declined"
        preview = tool.describe(call.arguments)
        if why is not None:
            preview = f"CAUTION: {why}. Allowing it now does not allow the next one.\n\n{preview}"
        request = ApprovalRequest(
            call.id, tool.name, tool.kind, call.arguments, preview, index, sensitive=why
        )
        out(
            {
                "type": "tool_state",
                "index": index,
                "id": call.id,
                "state": "approval",
                "preview": request.preview,
            }
        )
        approve = self.approver.approve
        if inspect.iscoroutinefunction(approve):
            decision = await approve(request)
        else:
            decision = await asyncio.to_thread(approve, request)
            if inspect.isawaitable(decision):
                decision = await decision
        if decision == "always":
            self.always.add(tool.name)
            return None, "running"
        if decision == "allow":
            return None, "running"
        if why is not None:
            return SENSITIVE_DECLINED.format(why=why), "declined"
        return "declined: the person did not allow this call", "declined"


#: A round as the recorder starts it, before any event.
_EMPTY_ROUND: dict[str, Any] = {"thinking": "", "text": "", "calls": []}
#: The notice of a `/compact` whose summary would not make the request smaller.
_LARGER = (
    "/compact: kept the conversation as it was: the summary would make the request larger "
    "(~{after:,} tokens) than the turns it replaces (~{before:,} tokens)"
)


def _reason(error: BaseException) -> str:
    """Why a summary failed, in one short line."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 160 else text[:159] + "…"


async def _ask_provider(provider: Any, method: str) -> Any:
    """What the provider's optional `method()` (sync or async) answers; None when it has
    none or it fails (a question about the model must never end a turn)."""
    probe = getattr(provider, method, None)
    if not callable(probe):
        return None
    try:
        value = probe()
        return await value if inspect.isawaitable(value) else value
    except Exception:
        return None


async def _call_fetch(provider: Any, messages: list, tools: list, emit: Callable) -> None:
    fetch = provider.fetch
    if inspect.iscoroutinefunction(fetch):
        await fetch(messages, tools, emit)
        return
    result = await asyncio.to_thread(fetch, messages, tools, emit)
    if inspect.isawaitable(result):
        await result


def _arguments(value: Any) -> dict[str, Any]:
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


def _assistant_message(text: str, calls: list[Call], thinking: list[dict]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if thinking:
        merged = _merge_thinking(thinking)
        if merged:
            message["thinking"] = merged
    if calls:
        message["tool_calls"] = []
        for c in calls:
            entry: dict[str, Any] = {"id": c.id, "name": c.name, "arguments": c.arguments}
            if c.metadata:
                entry["metadata"] = c.metadata
            message["tool_calls"].append(entry)
    return message


def _merge_thinking(parts: list[dict]) -> list[dict]:
    """Join streamed thinking pieces into blocks; a piece with metadata closes its block."""
    blocks: list[dict] = []
    texts: list[str] = []  # the open block's pieces, joined once when it closes
    for part in parts:
        texts.append(part["text"])
        if part.get("metadata"):
            blocks.append({"text": "".join(texts), "metadata": part["metadata"]})
            texts = []
    if texts:
        blocks.append({"text": "".join(texts)})
    return [b for b in blocks if b["text"] or b.get("metadata")]


def _print_cell(source: str) -> None:
    """`propose_cell` where no front offers a cell: print it, control characters shown."""

    print(visible(source))


def _safe(renderer: Renderer | None) -> Renderer:
    """A renderer that can fail without ending the turn."""
    if renderer is None:
        return lambda event: None

    def out(event: dict[str, Any]) -> None:
        try:
            renderer(event)
        except Exception:
            logging.getLogger("elelem_kernel").exception("renderer failed on %s", event.get("type"))

    return out
