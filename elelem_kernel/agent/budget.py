"""Budgets the person sets: a turn or a session stops before a request could pass one.

    --budget 0.50               dollars for the session (also `$2`)
    --budget '200k tokens'      tokens, input + output (also `1.5M tokens`, `5000 tokens`)
    --budget 0.50/turn          per turn instead (`200k tokens/turn`); `/session` is the default
    ELELEM_BUDGET=2             the budget every session starts with; `off` or empty: none

At most one session budget and one per-turn budget are in force; setting one replaces
the one of its kind, `off` removes both. A session budget counts what the session spent,
and a restored conversation counts what its records already spent.

Before each request the session asks `Ledger.check` what the request could cost at most:
its input tokens (the estimate of `agent/context.py`, priced at the full input price)
plus the most output it can return at the output price: the smaller of the provider's
output cap (`ASSUMED_OUTPUT` when it sets none) and what a known context window leaves
after the input. If that would pass a budget, the request is not sent: the turn ends with
stop reason `budget` and a line saying what was spent, what is left and how to raise it.
A request that is sent carries that output cap (`capped`), so its reply cannot run past
what was assumed: a stream already running is never cut for a budget, and it need not be.

What a turn spent is what the server counted, or the session's estimate where it counted
nothing (`agent/usage.py`): a budget binds on a server that reports no usage too.

Prices come from `ModelFacts.pricing` (`agent/pricing.py`: the known table, or the
person's option `price`). A model whose price is unknown cannot be held to a dollar
budget: the turn is refused with a message naming the token form and the option.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Protocol

from elelem_kernel.agent.context import known, short
from elelem_kernel.agent.pricing import cost, dollars
from elelem_kernel.agent.record import BudgetEntry, TurnRecord, TurnRecorder, add_usage
from elelem_kernel.agent.usage import count
from elelem_kernel.errors import ConfigError, ElelemError, OverBudget
from elelem_kernel.events import EXIT_CODES, Message, Provider, Usage
from elelem_kernel.store import day_spend


class SideRequest(Protocol):
    """What a turn spent besides its rounds (`agent/compaction.Compaction`): the usage of
    its requests."""

    @property
    def usage(self) -> Usage:
        """The tokens its requests used."""


class PricedModel(Protocol):
    """What a ledger asks of the session's model (`agent/model_facts.ModelFacts`): its
    names, window and prices, and its estimate of a request."""

    provider: Provider
    provider_name: str
    model: str | None

    def window(self) -> tuple[int, str]:
        """The context window in tokens, and where that number comes from."""

    def priced(self, usage: Usage) -> float | None:
        """Dollars for `usage`, or None when the price is unknown."""

    def estimate(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, object]] | None = None
    ) -> int:
        """The estimated input tokens of a request."""


ENV = "ELELEM_BUDGET"
#: Output tokens a request is assumed to use at most when the provider sets no max_tokens.
ASSUMED_OUTPUT = 8_192
#: How a front says "raise it": `{amount}` as typed after `/budget`, `{quoted}` for a shell.
DEFAULT_HINT = "--budget {quoted} (command line, %%elelem) or /budget {amount}"
#: The exit code of a command line turn stopped before it passed its budget.
EXIT_CODE = EXIT_CODES["budget"]
EXAMPLES = "give dollars (0.50, $2) or tokens (200k tokens, 1.5M tokens), optionally /turn"

#: A budget typed with its scope (`2/turn`, `200k tokens/session`).
_PER = re.compile(r"/\s*(turn|session)\s*$", re.IGNORECASE)
_FORM = re.compile(
    r"(?P<dollar>\$)?\s*(?P<number>\d+(?:\.\d*)?|\.\d+)\s*(?P<scale>[km])?"
    r"\s*(?P<tokens>tokens?)?\s*(?:/\s*(?P<per>turn|session))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Budget:
    """A limit: `amount` dollars (`unit` "usd") or tokens (`unit` "tokens"), per `per`.

    `cell`: a notebook cell's own budget (`%%elelem --budget 0.50`), per turn, typed and
    shown without `/turn` and called "this cell"."""

    amount: float
    unit: str = "usd"
    per: str = "session"
    cell: bool = False

    def show(self, value: float) -> str:
        """`value` in this budget's unit: `$0.42`, `$0.0012`, `41k tokens`."""
        if self.unit == "tokens":
            return f"{short(int(value))} tokens"
        return dollars(value)

    def __str__(self) -> str:
        """The budget as the person can type it back: `$2.00`, `200k tokens/turn`."""
        text = self.show(self.amount)
        return f"{text}/turn" if self.per == "turn" and not self.cell else text

    @property
    def scope(self) -> str:
        """What it counts, in words: "this session", "this turn" or "this cell"."""
        if self.cell:
            return "this cell"
        return "today" if self.per == "day" else f"this {self.per}"

    def as_record(self, spent: float) -> BudgetEntry:
        """The record's entry: this budget and what its scope had spent at the turn's end."""
        entry: BudgetEntry = {
            "amount": self.amount,
            "unit": self.unit,
            "per": self.per,
            "spent": spent,
        }
        if self.cell:
            entry["cell"] = True
        return entry


def parse(text: str) -> Budget | None:
    """A budget from `0.50`, `$2`, `200k tokens`, `1.5M tokens/turn`; None for `off`/empty.

    Raises ConfigError saying the accepted forms for anything else.
    """
    words = " ".join(str(text).split())
    if words.lower() in ("", "off", "none", "no"):
        return None
    match = _FORM.fullmatch(words)
    if match is None:
        raise ConfigError(f"bad budget {words!r}: {EXAMPLES}")
    number = float(match["number"])
    scale = (match["scale"] or "").lower()
    if match["tokens"]:
        if match["dollar"]:
            raise ConfigError(f"bad budget {words!r}: dollars or tokens, not both")
        number *= {"": 1, "k": 1_000, "m": 1_000_000}[scale]
        unit = "tokens"
    elif scale:
        raise ConfigError(
            f"bad budget {words!r}: write {match['number']}{scale} tokens for tokens, "
            "or a dollar amount such as 2 or $2"
        )
    else:
        unit = "usd"
    if unit == "tokens":
        number = math.floor(number)
    if not number > 0 or not math.isfinite(number):
        raise ConfigError(f"bad budget {words!r}: it must be more than zero ({EXAMPLES})")
    return Budget(number, unit, (match["per"] or "session").lower())


@dataclass
class Spent:
    """Dollars and tokens spent; `unpriced` counts turns whose dollars are unknown."""

    usd: float = 0.0
    tokens: int = 0
    unpriced: int = 0

    def __add__(self, other: Spent) -> Spent:
        return Spent(
            self.usd + other.usd, self.tokens + other.tokens, self.unpriced + other.unpriced
        )

    def of(self, unit: str) -> float:
        return self.tokens if unit == "tokens" else self.usd


def tokens_of(usage: Mapping[str, object]) -> int:
    """Tokens a usage counts against a budget: every input token (cached too) and output;
    a count that is not one (below zero: a server's nonsense) counts as none."""
    return sum(count(usage.get(k)) or 0 for k in ("input", "output"))


def spent_by(record: TurnRecord) -> Spent:
    """What one turn record spent: its recorded cost, else its usage priced now."""
    found = record.get("usage")
    usage: Usage = found.copy() if isinstance(found, dict) else {}
    price = record.get("cost")
    if not isinstance(price, (int, float)) or isinstance(price, bool):
        price = cost(str(record.get("provider") or ""), record.get("model"), usage)
    if price is None:
        return Spent(0.0, tokens_of(usage), 1)
    return Spent(max(float(price), 0.0), tokens_of(usage))


def priced(facts: PricedModel, usage: Usage) -> float | None:
    """Dollars for `usage` with the session's prices; None when unknown.

    The same question the session asks for its footer's cost (`ModelFacts.pricing`): the
    person's `price` option, else the model it prices (none away from the official
    endpoint, so a local server's model is unknown, never guessed from its name).
    """
    return facts.priced(usage)


def request_tokens(
    facts: PricedModel, messages: Sequence[Message], tools: Sequence[Mapping[str, object]]
) -> int:
    """The estimated input tokens of a request: the session's own (calibrated) estimate."""
    return facts.estimate(messages, tools)


def output_limit(provider: Provider) -> int:
    """The most output tokens one request to `provider` can return, as far as known."""
    return _own_limit(provider) or ASSUMED_OUTPUT


def most_output(facts: PricedModel, input_tokens: int) -> int:
    """The most output tokens a request of `input_tokens` can cost: the provider's cap
    (`output_limit`), or less when a known context window leaves less after the input."""
    window, source = facts.window()
    limit = output_limit(facts.provider)
    return min(limit, max(window - input_tokens, 1)) if known(source) else limit


def capped(provider: Provider, cap: int | None) -> Provider:
    """`provider`, or a copy whose replies stop at `cap` output tokens when its own cap is
    none or larger (`limited`, as HTTP providers have): a budget's request cannot run
    past the output it was allowed for."""
    if cap is None:
        return provider
    own = _own_limit(provider)
    return provider.limited(cap) if own is None or cap < own else provider


def _own_limit(provider: Provider) -> int | None:
    """The output cap `provider` sends itself (`max_tokens()`), or None."""
    try:
        value = provider.max_tokens()
        tokens = int(value) if value is not None else 0
    except (TypeError, ValueError, ElelemError):
        tokens = 0
    return tokens if tokens > 0 else None


@dataclass
class Ledger:
    """The budgets in force for one session and what the session has spent."""

    budgets: dict[str, Budget] = field(default_factory=dict)
    #: What the restored records spent (turns not run in this process).
    earlier: Spent = field(default_factory=Spent)
    #: What each turn run here spent, by turn id (a restore of them is not counted twice).
    live: dict[str, Spent] = field(default_factory=dict)
    #: How the front tells the person to raise the budget (see DEFAULT_HINT).
    hint: str = DEFAULT_HINT
    #: Budgets the site policy imposes (`agent/policy.py`): always in force, never raised;
    #: `per` "day" counts what the person spent today in every session (`store/day_spend`).
    imposed: tuple[Budget, ...] = ()
    #: Who imposes them, in the words of the messages.
    imposed_by: str = ""
    #: The running turn's recorder and compactions, where its spending so far is read.
    _turn: tuple[TurnRecorder, Sequence[SideRequest]] | None = field(
        default=None, init=False, repr=False
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Ledger:
        """A ledger with ELELEM_BUDGET's budget; ConfigError naming the variable if bad."""
        text = (os.environ if environ is None else environ).get(ENV, "")
        try:
            budget = parse(text)
        except ConfigError as error:
            raise ConfigError(f"{ENV}: {error}") from None
        return cls({budget.per: budget} if budget else {})

    # -- setting -------------------------------------------------------------------

    def set(self, budget: Budget | None, facts: PricedModel | None = None) -> None:
        """Put `budget` in force (replacing the one of its kind); None removes all.

        A dollar budget for a model of unknown price is refused (ConfigError).
        """
        if budget is None:
            self.budgets.clear()
            return
        for limit in self.imposed:
            if (limit.per, limit.unit) == (
                budget.per,
                budget.unit,
            ) and budget.amount > limit.amount:
                raise ConfigError(
                    f"a budget of {budget} per {budget.per} is more than {self.imposed_by} "
                    f"allows ({limit}); a lower one narrows it"
                )
        if facts is not None:
            self.refuse_unpriced(budget, facts)
        self.budgets[budget.per] = budget

    @contextmanager
    def applied(
        self,
        text: str | None,
        facts: PricedModel | None = None,
        cell: bool = False,
    ) -> Iterator[None]:
        """The budget typed as `text` in force for the `with` block only (one cell's turn):
        None changes nothing, `off` lifts every budget for the block. `cell`: a budget
        typed without `/turn` or `/session` is the cell's own (what its turn spends)."""
        saved = dict(self.budgets)
        if text is not None:
            budget = parse(text)
            if budget is not None and cell and not _PER.search(text):
                budget = replace(budget, per="turn", cell=True)
            self.set(budget, facts)
        try:
            yield
        finally:
            self.budgets = saved

    def refuse_unpriced(self, budget: Budget, facts: PricedModel) -> None:
        """ConfigError when `budget` is in dollars and the session's model has no price."""
        if budget.unit == "usd" and priced(facts, {"input": 1, "output": 1}) is None:
            model = "/".join(dict.fromkeys(str(n) for n in (facts.provider_name, facts.model) if n))
            if budget in self.imposed:
                raise ConfigError(
                    f"{self.imposed_by} sets a dollar budget ({budget} per {budget.per}), and "
                    f"the price of {model} is unknown: ask the administrator for its price "
                    "or a budget in tokens"
                )
            raise ConfigError(
                f"a dollar budget ({budget}) cannot be kept for {model}: its price is unknown. "
                f"Give the budget in tokens instead, e.g. {self.raise_with('200k tokens')}, "
                "or give the price with the option price=IN/OUT (dollars per million "
                "tokens, e.g. -o price=2/8)"
            )

    def raise_with(self, amount: str) -> str:
        """The front's words for setting the budget to `amount`."""
        import shlex  # only when a budget is refused: the CLI's turn does not need it

        return self.hint.format(amount=amount, quoted=shlex.quote(amount))

    # -- spending ------------------------------------------------------------------

    def restore(self, conversations: Mapping[str, list[TurnRecord]]) -> None:
        """Count what the restored records spent (turns run here are counted already)."""
        self.earlier = Spent()
        for turns in conversations.values():
            for record in turns:
                if record.get("turn") not in self.live:
                    self.earlier += spent_by(record)

    def total(self) -> Spent:
        """What the session has spent: restored turns and the turns run here."""
        spent = self.earlier
        for turn in self.live.values():
            spent += turn
        return spent

    def start(
        self, recorder: TurnRecorder, compactions: Sequence[SideRequest], hint: str = DEFAULT_HINT
    ) -> None:
        """A turn begins: its spending so far is read from `recorder` and `compactions`;
        `hint` says how to raise a budget in its front's words."""
        self._turn = (recorder, compactions)
        self.hint = hint

    def _turn_usage(self) -> Usage:
        usage: Usage = {}
        if self._turn is not None:
            recorder, compactions = self._turn
            add_usage(usage, recorder.usage_so_far())
            for compaction in compactions:
                add_usage(usage, compaction.usage)
        return usage

    def check(
        self, facts: PricedModel, messages: Sequence[Message], tools: Sequence[Mapping[str, object]]
    ) -> int | None:
        """Raise OverBudget when a request of `messages` could pass a budget in force; else
        the output cap the request must carry (`capped`), None when no budget is in force."""
        why = self.over(facts, messages, tools)
        if why:
            raise OverBudget(why)
        if not self.budgets and not self.imposed:
            return None
        return most_output(facts, request_tokens(facts, messages, tools))

    def over(
        self, facts: PricedModel, messages: Sequence[Message], tools: Sequence[Mapping[str, object]]
    ) -> str | None:
        """Why a request of `messages` (at least) could pass a budget, or None if it fits."""
        if not self.budgets and not self.imposed:
            return None
        turn = self._turn_usage()
        tokens = request_tokens(facts, messages, tools)
        request: Usage = {"input": tokens, "output": most_output(facts, tokens)}
        budgets = [*self.budgets.values(), *self.imposed]
        for budget in budgets:  # one that cannot be kept is said first
            self.refuse_unpriced(budget, facts)
        for budget in budgets:
            spent, need = float(tokens_of(turn)), float(tokens_of(request))
            if budget.unit == "usd":
                spent, need = priced(facts, turn) or 0.0, priced(facts, request) or 0.0
            if budget.per == "session":
                spent += self.total().of(budget.unit)
            if budget.per == "day":
                spent += self.today().of(budget.unit)
            if spent + need > budget.amount:
                return self._message(budget, spent, need)
        return None

    def today(self) -> Spent:
        """What the person spent today, in every session that counted it."""
        day = day_spend.read()
        return Spent(day["usd"], int(day["tokens"]), int(day["unpriced"]))

    def _message(self, budget: Budget, spent: float, need: float) -> str:
        left = max(budget.amount - spent, 0)
        verb = "use" if budget.unit == "tokens" else "cost"
        amount = _nice_up(max(2 * budget.amount, spent + need), budget.unit)
        suggestion = replace(budget, amount=amount)
        shown_left, shown_need = _apart(budget, left, need)
        how = f"To go on, raise it: {self.raise_with(_typed(suggestion))}"
        if budget in self.imposed and budget not in self.budgets.values():
            how = f"This limit ({budget} per {budget.per}) is set by {self.imposed_by}."
        return (
            f"budget: {budget.scope} spent {budget.show(spent)} of {budget}, {shown_left} left; "
            f"the next request could {verb} up to {shown_need}, so it was not sent. "
            f"{how}"
        )

    def settle(self, facts: PricedModel, record: TurnRecord) -> None:
        """The turn ended: count what it spent; `record["budget"]` says what applied (a
        dollar budget the model's unknown price refused did not)."""
        self._turn = None
        spent = spent_by(record)
        self.live[str(record.get("turn"))] = spent
        if any(b.per == "day" for b in self.imposed):
            day_spend.add(spent.usd, spent.tokens, spent.unpriced)
        unpriced = priced(facts, {"input": 1, "output": 1}) is None
        kept = [b for b in self.budgets.values() if not (b.unit == "usd" and unpriced)]
        if kept:
            total = self.total()
            record["budget"] = [
                b.as_record(spent.of(b.unit) if b.per == "turn" else total.of(b.unit)) for b in kept
            ]

    # -- showing -------------------------------------------------------------------

    def summary(self) -> str:
        """One line of the budgets in force: `$2.00 (spent $0.42, $1.58 left) · $0.10/turn`,
        or `none` with how to set one."""
        if not self.budgets:
            return f"none (set one with {self.raise_with('2')})"
        parts = []
        for budget in self.budgets.values():
            if budget.per == "turn":
                parts.append(str(budget))
            else:
                used = self.total().of(budget.unit)
                left = budget.show(max(budget.amount - used, 0))
                parts.append(f"{budget} (spent {budget.show(used)}, {left} left)")
        return " · ".join(parts)

    def describe(self) -> str:
        """What `/budget` alone says: the budgets, spent and left."""
        total = self.total()
        spent = f"{dollars(total.usd)} and {short(total.tokens)} tokens"
        unknown = (
            f" ({total.unpriced} turn{'s' * (total.unpriced != 1)} of unknown price not in "
            "the dollars)"
            if total.unpriced
            else ""
        )
        if not self.budgets:
            return "\n\n".join(
                [
                    f"No budget set. This session spent {spent}{unknown}. "
                    f"Set one with {self.raise_with('2')} or {self.raise_with('200k tokens')}.",
                    *self._imposed_lines(),
                ]
            )
        lines = []
        for budget in self.budgets.values():
            if budget.per == "turn":
                lines.append(f"per turn: **{budget}** (each turn stops before it could pass it)")
            else:
                used = total.of(budget.unit)
                left = budget.show(max(budget.amount - used, 0))
                lines.append(
                    f"session: **{budget}**, spent {budget.show(used)}, {left} left{unknown}"
                )
        lines.append(f"`/budget off` removes {'them' if len(lines) > 1 else 'it'}.")
        return "\n\n".join(lines + self._imposed_lines())

    def _imposed_lines(self) -> list[str]:
        """What `/budget` says of the policy's budgets."""
        lines = []
        for budget in self.imposed:
            used = {"day": self.today(), "session": self.total()}.get(budget.per)
            spent = f", spent {budget.show(used.of(budget.unit))}" if used else ""
            lines.append(f"per {budget.per}: **{budget}**{spent}, set by {self.imposed_by}")
        return lines


def _nice_up(value: float, unit: str) -> float:
    """`value` rounded up to two significant digits (a budget worth typing)."""
    if value <= 0:
        return value
    step = 10 ** (math.floor(math.log10(value)) - 1)
    nice = math.ceil(value / step - 1e-9) * step
    return float(math.ceil(nice)) if unit == "tokens" else round(nice, 6)


def _apart(budget: Budget, left: float, need: float) -> tuple[str, str]:
    """`left` and `need` as a person reads them, exact where rounding would show them equal
    ("1.2k left; could use up to 1.2k" said nothing)."""
    shown = budget.show(left), budget.show(need)
    if shown[0] != shown[1] or left == need:
        return shown
    if budget.unit == "tokens":
        return f"{int(left):,} tokens", f"{int(need):,} tokens"
    digits = 2
    while digits < 12 and f"{left:.{digits}f}" == f"{need:.{digits}f}":
        digits += 1
    return f"${left:.{digits}f}", f"${need:.{digits}f}"


def _typed(budget: Budget) -> str:
    """`budget` as the person would type it: `4`, `0.25`, `400k tokens`, `2/turn` (a
    cell's own without its `/turn`)."""
    if budget.unit == "tokens":
        amount = int(budget.amount)
        text = f"{amount / 1000:g}k tokens" if amount >= 1000 else f"{amount} tokens"
    else:
        text = f"{budget.amount:g}"
    return f"{text}/turn" if budget.per == "turn" and not budget.cell else text
