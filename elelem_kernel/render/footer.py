"""The words under a turn, the same in every view: terminal, live widget and static.

The footer line: every view hands it the same fields, from the `turn_end` event (live
views) or the turn record (frozen output): usage, ms, rounds, stop, cost (written by
`agent.pricing.dollars`, the one money format), provider/model, the context meter (how
much of the model's window the last request used) and the budgets in force. And the
compaction note: the one line saying what a compaction did.
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem_kernel.agent.budget import Budget
from elelem_kernel.agent.context import short
from elelem_kernel.agent.pricing import FREE_PROVIDERS, dollars
from elelem_kernel.render.call_text import seconds

#: The endings of model weight files, left out of a model named by its file.
WEIGHT_FILES = (".gguf", ".ggml", ".bin", ".safetensors")
#: Stop reasons in a person's words (records and `--json` keep the reason itself).
STOP_WORDS = {"end_turn": "done"}


def footer_line(
    fields: Mapping[str, object], provider: str | None = None, model: str | None = None
) -> str:
    """`in 1,234 · out 56 · 2.3 s · 2 rounds · done · openai/gpt-x · $0.0012`.

    `cost` present but None means the session could not price the model ("cost unknown");
    0 from an offline provider (demo, echo, Ollama) is "free"; absent or 0 otherwise, no
    cost is shown. `rounds` is a count (event) or the list of rounds (record).
    `budget` (while one is set) adds `$0.42 of $2.00` or `41k of 200k tokens` for each
    budget in force, what its scope had spent at the end of the turn.
    The model is the one the server said answered (`served_model`) when it named another.
    `usage_estimated` marks the counts `~` (the server gave none: the session's estimate);
    `priced_by` says where a cost came from when it is not the known price list:
    `$0.0012 (your price)` (the option `price`), `$0.0012 (gateway)` (what it reported).
    """
    found = fields.get("usage")
    usage = found if isinstance(found, Mapping) else {}
    cost = fields.get("cost", usage.get("cost"))
    provider = provider or _text(fields.get("provider"))
    if "cost" in fields and cost is None:
        cost = "cost unknown"
    elif cost == 0 and provider in FREE_PROVIDERS:
        cost = "free"
    rounds = fields.get("rounds")
    if isinstance(rounds, list):
        rounds = len(rounds)
    source = PRICED_BY.get(str(fields.get("priced_by")))
    if source and isinstance(cost, (int, float)) and not isinstance(cost, bool):
        cost = f"{dollars(cost)} ({source})"
    ms = fields.get("ms")
    context = fields.get("context")
    line = footer_text(
        usage,
        ms if isinstance(ms, (int, float)) else None,
        rounds if isinstance(rounds, int) else None,
        _text(fields.get("stop")),
        provider,
        _text(fields.get("served_model")) or model or _text(fields.get("model")),
        cost if isinstance(cost, (int, float, str)) else None,
        context if isinstance(context, Mapping) else None,
        fields.get("usage_estimated") is True,
    )
    return " · ".join([line, *_budget_parts(fields.get("budget"))])


def _text(value: object) -> str | None:
    """A field that should be text, as text; None when it is missing."""
    return None if value is None else str(value)


def _count(usage: Mapping[str, object], key: str) -> int:
    """A token count of `usage`, 0 when it is missing or not a number."""
    value = usage.get(key)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def footer_text(
    usage: Mapping[str, object] | None,
    ms: float | None,
    rounds: int | None,
    stop: str | None,
    provider: str | None = None,
    model: str | None = None,
    cost: float | str | None = None,
    context: Mapping[str, object] | None = None,
    estimated: bool = False,
) -> str:
    """`in 1,234 · out 56 · cached 7 · ctx 1.3k/200k · 2.3 s · 2 rounds · done · openai/gpt-x · $0.0012`.

    `cost` in dollars (0 or None: not shown), or a word such as "cost unknown"; `context`
    the record's meter of the last request (`meter`); `estimated`: the counts are the
    session's estimate (`in ~1,234 · out ~56`), the server sent none.
    """
    usage = usage or {}
    mark = "~" if estimated else ""
    if stop in ("interrupted", "error") and not any(usage.values()):
        parts = ["tokens unknown"]  # the stream ended before the provider counted them
    else:
        parts = [
            f"in {mark}{_count(usage, 'input'):,}",
            f"out {mark}{_count(usage, 'output'):,}",
        ]
    if _count(usage, "cache_read"):
        parts.append(f"cached {_count(usage, 'cache_read'):,}")
    gauge = meter(context)
    if gauge:
        parts.append(gauge)
    parts.append(seconds(ms))
    if rounds is not None:
        parts.append(f"{rounds} round" + ("" if rounds == 1 else "s"))
    if stop:
        parts.append(STOP_WORDS.get(stop, stop))
    if provider or model:
        names = [str(p) for p in (provider, model_name(model)) if p]
        parts.append("/".join(dict.fromkeys(names)))  # "demo", not "demo/demo"
    if isinstance(cost, str):
        parts.append(cost)
    elif cost:
        parts.append(dollars(cost))
    return " · ".join(parts)


def model_name(model: str | None) -> str | None:
    """The model as a person names it: a local server that names its model by the file it
    loaded (`/models/SmolLM2-135M-Q8_0.gguf`) is shown `SmolLM2-135M-Q8_0`."""
    if not model:
        return model
    text = str(model)
    if not (text.startswith(("/", "./", "~")) or "\\" in text or text.endswith(WEIGHT_FILES)):
        return text
    name = text.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    for suffix in WEIGHT_FILES:
        name = name.removesuffix(suffix)
    return name or text


def meter(context: Mapping[str, object] | None) -> str | None:
    """`ctx 41k/200k` (`ctx ~41k/200k` when estimated) for a record's `context`, or None."""
    if not isinstance(context, Mapping):
        return None
    used, window = context.get("used"), context.get("window")
    if not isinstance(used, int) or not isinstance(window, int) or window <= 0:
        return None
    mark = "~" if context.get("estimated") else ""
    assumed = "?" if context.get("assumed") else ""
    return f"ctx {mark}{short(used)}/{short(window)}{assumed}"


#: How a footer says where a cost came from (the record's `priced_by`), when it is not
#: the known price table: the person's option `price`, or what the gateway reported.
PRICED_BY = {"option": "your price", "gateway": "gateway"}


def _budget_parts(entries: object) -> list[str]:
    """Footer parts for a record's `budget`: `$0.42 of $2.00`, `41k of 200k tokens/turn`."""
    parts = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        try:
            cell = entry.get("cell") is True
            budget = Budget(float(entry["amount"]), str(entry["unit"]), str(entry["per"]), cell)
            spent = float(entry["spent"])
        except (KeyError, TypeError, ValueError):
            continue
        if budget.unit == "tokens":
            text = f"{short(int(spent))} of {short(int(budget.amount))} tokens"
        else:
            text = f"{dollars(spent)} of {dollars(budget.amount)}"
        parts.append(f"{text}/turn" if budget.per == "turn" and not budget.cell else text)
    return parts


def compaction_note(entry: Mapping[str, object]) -> str:
    """The one line a person sees: `compacted 14 turns, 58k → 3k tokens` (or why not)."""
    n = _count(entry, "turns")
    turns = f"{n} turn" + ("" if n == 1 else "s")
    sizes = f"{short(_count(entry, 'before'))} → {short(_count(entry, 'after'))} tokens"
    if entry.get("failed"):
        return f"could not compact ({entry['failed']}): left out the oldest {turns}, {sizes}"
    return f"compacted {turns}, {sizes}"
