"""Shared pieces: timing, the result shape, a wire server that notes its first bytes."""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # tests.wire_servers lives beside the package
    sys.path.insert(0, str(REPO))

from tests.wire_servers import Reply, Round, WireServer, reply  # noqa: E402

__all__ = ["Reply", "Round", "WireServer", "reply"]

#: The window the benchmarks' sessions are told (ELELEM_CONTEXT_WINDOW): the loopback
#: server stands in for a model with a large window. Unknown, a session assumes 8,192
#: tokens (and asks the server first), so a 2,000-word reply would make the next turn
#: compact, a request the server's script does not hold.
WINDOW = 1_000_000

#: Marks the first piece of a reply, to spot the first message that carries reply text.
MARKER = "Zfirstword"


def long_text(deltas: int) -> str:
    """A reply of `deltas` words; the wire servers stream one word per delta."""
    return " ".join([MARKER, *(f"w{i}" for i in range(1, deltas))])


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def repeat(fn: Callable[[], Any], times: int) -> list[float]:
    """Wall seconds of `times` calls of `fn`."""
    out = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def interleave(cases: dict[str, Callable[[], Any]], times: int) -> dict[str, list[float]]:
    """Wall seconds of each case, run in turn `times` times, so load hits all alike."""
    out: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(times):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - start)
    return out


def paired(a: list[float], b: list[float]) -> float:
    """Median of the per-repetition ratios a[i] / b[i] (robust to load drifting)."""
    return round(median([x / y for x, y in zip(a, b, strict=True) if y]), 2)


def result(name: str, title: str, rows: list[tuple[str, Any, str]], **data: Any) -> dict:
    """A benchmark's outcome: table rows (label, value, unit or note) and raw data."""
    return {"name": name, "title": title, "rows": [list(r) for r in rows], "data": data}


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("nan")


class TimedServer(WireServer):
    """A `WireServer` noting (perf_counter) when it starts and ends answering each request."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.first_bytes: list[float] = []
        self.last_bytes: list[float] = []

    async def _send(self, r: Reply, reader: Any, writer: Any) -> bool:  # type: ignore[override]
        self.first_bytes.append(time.perf_counter())
        try:
            return await super()._send(r, reader, writer)
        finally:
            self.last_bytes.append(time.perf_counter())


#: Bytecode caches for the processes the benchmarks start, outside the repository.
PYCACHE = Path.home() / ".cache" / "elelem-bench" / "pycache"


def with_bytecode(env: dict[str, str]) -> dict[str, str]:
    """`env` letting Python cache bytecode (in PYCACHE), as an installed package has it,
    and telling sessions the benchmarks' context window (WINDOW).

    Without it (PYTHONDONTWRITEBYTECODE=1, as in this machine's shell) every process
    compiles every module of the package from source, which no installed copy does.
    """
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env["ELELEM_CONTEXT_WINDOW"] = str(WINDOW)
    return env


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without provider keys or endpoints, plus `extra`."""
    env = with_bytecode({k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
    for key in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST", "ELELEM_PROVIDER"):
        env.pop(key, None)
    for key in ("JPY_SESSION_NAME", "ELELEM_NOTEBOOK", "VIRTUAL_ENV"):
        env.pop(key, None)
    env.update(extra)
    return env
