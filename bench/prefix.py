"""4. Prompt-prefix stability: how much of each request the next one repeats byte for byte.

Per wire format and history policy, a scripted 10-round tool loop (read/list/grep on a
small workspace, then an answer) and then 5 more turns of one tool call and an answer, all
through the real providers against the loopback server, which records every request body.
For each request, the share of it that is a byte-identical prefix of the next request (what
provider prompt caches reward) is measured twice: on the JSON body as sent, and in prompt
order (tools, system, messages), the order providers lay the prompt out for their caches
(without Anthropic's moving `cache_control` markers).
Billing: tokens ≈ bytes / 4; a request's cached part is its longest common prefix with any
earlier request; cache reads billed at 0.1× (Anthropic's price; OpenAI charges 0.25-0.5×).

Each policy runs twice: with the model's usual window (nothing is compacted), and with a
`WINDOW`-token window, so the session compacts (the server answers each summary request,
the only requests without tools, with a short fixed summary; they are billed too).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench import common
from bench.common import Reply, Round, WireServer, median, reply, result

NAME = "prefix"

FORMATS = ("anthropic", "openai", "responses", "ollama")
LOOP_CALLS = [
    ("read", {"path": "README.md"}),
    ("list", {}),
    ("grep", {"pattern": "def "}),
    ("read", {"path": "src/a.py"}),
    ("read", {"path": "src/b.py"}),
]
CACHE_READ_PRICE = 0.1
POLICIES = ("replies", "full")
SHOW = "/api/show"
#: The small window (tokens) of the compacting runs.
WINDOW = 6_000
SUMMARY = "Summary: a project of two modules, a.py and b.py, of small functions x * i."


class SummaryServer(WireServer):
    """Answers requests without tools (compaction summaries) itself, the rest from the queue."""

    fmt = "openai"

    def _next(self, method: str, path: str) -> Reply:
        if path.endswith(SHOW):  # Ollama's window probe: not known here, the table's is used
            return Reply(404, {"content-type": "application/json"}, [b"{}"], stream=False)
        body = self.requests[-1].body if self.requests else None
        if method == "POST" and isinstance(body, dict) and not body.get("tools"):
            return reply(self.fmt, Round(text=SUMMARY))
        return super()._next(method, path)


def workspace(root: Path) -> Path:
    """A small project for the tools to look at."""
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# Bench project\n\nTwo modules and a README.\n" * 5)
    for name in ("a", "b"):
        body = "".join(f"def {name}{i}(x):\n    return x * {i}\n\n" for i in range(30))
        (root / "src" / f"{name}.py").write_text(body)
    return root


def script(loop_rounds: int, more_turns: int) -> tuple[list[Round], list[str]]:
    """The server's rounds and the prompts: one tool loop turn, then short turns."""
    rounds = [
        Round(text=f"Step {i + 1}.", calls=[LOOP_CALLS[i % len(LOOP_CALLS)]])
        for i in range(loop_rounds)
    ]
    rounds.append(Round(text="The project has two modules of small functions."))
    prompts = ["Look around the project and summarize it."]
    for i in range(more_turns):
        rounds.append(Round(calls=[LOOP_CALLS[i % len(LOOP_CALLS)]]))
        rounds.append(Round(text=f"Answer {i + 1}: it multiplies."))
        prompts.append(f"Question {i + 1}: what does {'ab'[i % 2]}{i} do?")
    return rounds, prompts


def record(
    fmt: str,
    history: str,
    ws: Path,
    loop_rounds: int,
    more_turns: int,
    window: int | None = None,
) -> list[bytes]:
    """Every request body the provider sent for the scripted conversation."""
    from elelem_kernel.assembly.sessions import new_session

    rounds, prompts = script(loop_rounds, more_turns)
    with SummaryServer() as server:
        server.fmt = fmt
        server.script(fmt, *rounds)
        session = new_session(
            provider=fmt,
            base_url=server.base_url(fmt),
            api_key="k",
            workspace=ws,
            mode="plan",
            history=history,
        )
        session.max_rounds = max(session.max_rounds, loop_rounds + 2)
        session.facts.context_window = window or common.WINDOW  # unknown, it would compact

        async def converse() -> None:
            try:
                for prompt in prompts:
                    turn = await session.turn(prompt)
                    if turn.stop != "end_turn":
                        raise RuntimeError(f"{fmt}: turn ended with {turn.stop}: {turn.error}")
            finally:
                await session.provider.aclose()

        asyncio.run(converse())
        return [r.raw for r in server.requests if r.method == "POST" and r.path != SHOW]


def prompt_order(raw: bytes) -> bytes:
    """The body's prompt parts in the order providers cache them: tools, system, messages.

    Anthropic's `cache_control` markers are dropped: they say where to cache, they are not
    prompt content (the marker moves to the newest message on every request).
    """
    body = _unmarked(json.loads(raw))
    system = body.get("system", body.get("instructions"))
    messages = body.get("messages", body.get("input"))
    return json.dumps([body.get("tools"), system, messages], ensure_ascii=False).encode()


def _unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (binary search: fast on long bodies)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def measure(bodies: list[bytes]) -> dict:
    """Prefix shares between consecutive requests, and cache-aware billing."""
    shares = [common_prefix(a, b) / len(a) for a, b in zip(bodies[:-1], bodies[1:], strict=True)]
    total = cached = 0
    for i, body in enumerate(bodies):
        hit = max((common_prefix(earlier, body) for earlier in bodies[:i]), default=0)
        total += len(body)
        cached += hit
    billed = (total - cached) + CACHE_READ_PRICE * cached
    return {
        "shares": [round(s, 4) for s in shares],
        "median_share": round(median(shares), 3),
        "min_share": round(min(shares), 3),
        "tokens": total // 4,
        "cached_tokens": cached // 4,
        "billed_tokens": int(billed // 4),
    }


def run(
    quick: bool = False,
    smoke: bool = False,
    loop_rounds: int | None = None,
    more_turns: int | None = None,
) -> dict:
    loop_rounds = loop_rounds or (2 if smoke else 10)
    more_turns = more_turns or (1 if smoke else 5)
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-prefix-"))
    rows, data = [], {}
    try:
        ws = workspace(tmp / "ws")
        for window in (None, WINDOW):
            for history in POLICIES:
                for fmt in FORMATS:
                    bodies = record(fmt, history, ws, loop_rounds, more_turns, window)
                    raw = measure(bodies)
                    ordered = measure([prompt_order(b) for b in bodies])
                    name = f"{fmt}/{history}" + (f"/{window}" if window else "")
                    data[name] = {"requests": len(bodies), "raw": raw, "prompt": ordered}
                    where = f", {window:,}-token window" if window else ""
                    label = f"{fmt}, history={history}{where} ({len(bodies)} requests)"
                    rows.append(row(label, raw, ordered))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    title = f"4. Prompt-prefix stability ({loop_rounds}-round tool loop + {more_turns} turns)"
    return result("prefix", title, rows, **data)


def row(label: str, raw: dict, ordered: dict) -> tuple[str, str, str]:
    billed = ordered["billed_tokens"] / ordered["tokens"]
    return (
        label,
        f"{ordered['median_share']:.0%}",
        f"prefix kept, median (min {ordered['min_share']:.0%}; as sent "
        f"{raw['median_share']:.0%}/{raw['min_share']:.0%}); "
        f"billed {ordered['billed_tokens']:,} tokens = {billed:.0%} of {ordered['tokens']:,}",
    )
