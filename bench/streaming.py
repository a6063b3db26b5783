"""1. Streaming overhead: a 2,000-delta reply through httpx, the CLI, and a `%%elelem` cell.

The loopback OpenAI-format server streams as fast as it can (TCP_NODELAY). References:
(a) a bare httpx client in this process (kept open, as the session keeps its own client)
reading and discarding the stream, and (a') the same in a fresh `python -c` process, the
floor for the CLI, which also starts an interpreter. Measured: (b) `elelem-kernel ask -p
openai` to /dev/null as a process, and the same turn in-process (a warm session, terminal
renderer); (c) a `%%elelem -p openai` cell in a warm python3 kernel, sent with a cell id
as JupyterLab sends it (live view), and (c') without (headless: static output at the end),
from execute_request to idle: wall time, iopub messages, the time from execute_request to
the server's first byte, and from that to the first iopub message carrying reply text. (c floor): in the same kernel,
a cell that reads the stream itself (read, SSE events, JSON) on the kernel's loop and
displays the text, from the server's last byte to idle: the least any cell showing the
reply spends after the last byte (the floor of the goal "last byte → idle").
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import (
    MARKER,
    WINDOW,
    Round,
    TimedServer,
    interleave,
    long_text,
    median,
    ms,
    paired,
    result,
    with_bytecode,
)
from bench.kernels import Kernels

NAME = "streaming"

SETTLE = 0.2
#: The request every floor sends: the server's script decides the reply.
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
#: In the footer the view shows at turn_end (and the frozen output), never in the reply.
END = "end_turn"
#: (a3') in its own process: read, cut and decode the stream; print when it ended.
PARSED = """
import sys, time
from bench.streaming import AsyncFloor

floor = AsyncFloor(sys.argv[1])
floor.parsed()
print(time.perf_counter())
floor.close()
"""
#: The repository's root: where `bench` imports from in the processes started here.
ROOT = Path(__file__).resolve().parents[1]
#: (c floor), run once in the kernel: the least a cell showing the reply does, on the
#: kernel's own loop (a top-level await) with a client kept open, as the session keeps its
#: own: read the stream, cut its events (the package's bounded reader), decode each one's
#: JSON for its text. Each floor cell then displays `await _floor_text(base)`.
KERNEL_FLOOR = """
import json, sys
sys.path.insert(0, {root!r})
import httpx
from elelem_kernel.providers import stream as _stream

_floor_client = httpx.AsyncClient()


async def _floor_text(base):
    text = []
    async with _floor_client.stream("POST", base + "/chat/completions", json={body!r}) as r:
        async for _name, data in _stream.events(r.aiter_raw(), 1 << 24):
            if data != "[DONE]":
                for choice in json.loads(data).get("choices") or []:
                    text.append((choice.get("delta") or {{}}).get("content") or "")
    return "".join(text)
"""
KERNEL_FLOOR_CELL = "display({{'text/plain': await _floor_text({base!r})}}, raw=True)"
BARE = """
import httpx, sys
with httpx.Client() as c:
    with c.stream("POST", sys.argv[1] + "/chat/completions", json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}) as r:
        for _ in r.iter_raw():
            pass
"""


def bare_httpx(client: Any, base: str) -> None:
    """Read and discard one streamed reply with a plain, already open httpx client."""
    with client.stream("POST", base + "/chat/completions", json=BODY) as r:
        for _ in r.iter_raw():
            pass


def cli_command() -> list[str]:
    script = Path(sys.executable).parent / "elelem-kernel"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "elelem_kernel.cli"]


class AsyncFloor:
    """The least an asyncio client that shows the reply must do, on its own event loop.

    `raw` reads and discards the stream with `httpx.AsyncClient` (the session's transport);
    `parsed` also cuts the server-sent events (the package's bounded reader) and decodes
    each one's JSON to pick out its text, as any client showing the text has to.
    """

    def __init__(self, base: str):
        import httpx

        self.base = base
        self.loop = asyncio.new_event_loop()
        self.client = httpx.AsyncClient()

    def raw(self) -> None:
        async def go() -> None:
            async with self.client.stream("POST", self.base + "/chat/completions", json=BODY) as r:
                async for _ in r.aiter_raw():
                    pass

        self.loop.run_until_complete(go())

    def parsed(self) -> None:
        import json

        from elelem_kernel.providers import stream

        async def go() -> None:
            async with self.client.stream("POST", self.base + "/chat/completions", json=BODY) as r:
                text = []
                async for _name, data in stream.events(r.aiter_raw(), 1 << 24):
                    if data != "[DONE]":
                        for choice in json.loads(data).get("choices") or []:
                            text.append((choice.get("delta") or {}).get("content") or "")

        self.loop.run_until_complete(go())

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


class WarmSession:
    """A session kept across turns on one event loop (its HTTP client stays open)."""

    def __init__(self, base: str, workspace: Path):
        from elelem_kernel.assembly.sessions import new_session
        from elelem_kernel.render.terminal_view import TerminalRenderer

        self.session = new_session(
            provider="openai", base_url=base, api_key="k", workspace=workspace, mode="plan"
        )
        self.session.facts.context_window = WINDOW
        self.renderer = TerminalRenderer(out=io.StringIO(), err=io.StringIO(), color=False)
        self.loop = asyncio.new_event_loop()

    def turn(self) -> None:
        """One `ask` turn, the terminal renderer writing to memory."""
        self.renderer.out = io.StringIO()
        turn = self.loop.run_until_complete(self.session.turn("hi", renderer=self.renderer))
        if turn.stop != "end_turn":
            raise RuntimeError(f"in-process turn ended with {turn.stop}: {turn.error}")

    def close(self) -> None:
        self.loop.run_until_complete(self.session.provider.aclose())
        self.loop.close()


def run(
    quick: bool = False, smoke: bool = False, deltas: int | None = None, reps: int | None = None
) -> dict:
    deltas = deltas or (50 if smoke else 2000)
    reps = reps or (1 if smoke else 3 if quick else 7)
    text = long_text(deltas)
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-stream-"))
    workspace = tmp / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# bench\n")
    data: dict = {"deltas": deltas, "reps": reps}
    import httpx

    try:
        with TimedServer() as server, httpx.Client() as client:
            base = server.base_url("openai")
            env = with_bytecode({**os.environ, **server.env("openai")})
            env.pop("ELELEM_PROVIDER", None)

            def scripted(fn):
                def go():
                    server.script("openai", Round(text=text))
                    fn()

                return go

            def fresh() -> None:
                subprocess.run(
                    [sys.executable, "-c", BARE, base], env=env, check=True, capture_output=True
                )

            def cli() -> None:
                out = subprocess.run(
                    [*cli_command(), "ask", "-p", "openai", "--mode", "plan", "hi"],
                    cwd=workspace,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    check=False,
                )
                if out.returncode:
                    raise RuntimeError(f"elelem-kernel ask failed: {out.stderr.decode()[-500:]}")

            warm = WarmSession(base, workspace)
            floor_async = AsyncFloor(base)
            tails: list[float] = []

            def parse_process() -> None:
                """(a3') the parse floor in its own process, as a kernel is: the time from
                the server's last byte to the end of its parse (both clocks monotonic)."""
                out = subprocess.run(
                    [sys.executable, "-c", PARSED, base],
                    cwd=ROOT,
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                tails.append(float(out.stdout.split()[-1]) - server.last_bytes[-1])

            cases = {
                "floor": lambda: bare_httpx(client, base),
                "async_raw": floor_async.raw,
                "async_parsed": floor_async.parsed,
                "parse_process": parse_process,
                "process_floor": fresh,
                "cli": cli,
                "session": warm.turn,
            }
            cases = {name: scripted(fn) for name, fn in cases.items()}
            try:
                interleave(cases, 1)  # warm-up: imports, connections, page cache
                t = interleave(cases, reps)
            finally:
                warm.close()
                floor_async.close()
            data.update(t)
            data["tails"] = tails
            rows = [
                ("(a) bare httpx, in-process (floor)", ms(median(t["floor"])), "ms"),
                (
                    "(a2) async httpx read ÷ (a)",
                    paired(t["async_raw"], t["floor"]),
                    "× (the session's transport, reading only)",
                ),
                (
                    "(a3) async read + SSE + JSON ÷ (a)",
                    paired(t["async_parsed"], t["floor"]),
                    "× (the least a client showing the text does)",
                ),
                ("(a') bare httpx, fresh process", ms(median(t["process_floor"])), "ms"),
                ("(b) elelem-kernel ask, process", ms(median(t["cli"])), "ms"),
                ("(b) ÷ (a')", paired(t["cli"], t["process_floor"]), "× (both start a Python)"),
                ("(b) ÷ (a)", paired(t["cli"], t["floor"]), "×"),
                ("(b) same turn in-process", ms(median(t["session"])), "ms (warm session.turn)"),
                ("(b in-process) ÷ (a)", paired(t["session"], t["floor"]), "×"),
                ("(b in-process) ÷ (a3)", paired(t["session"], t["async_parsed"]), "×"),
                (
                    "(a3') server's last byte → parse done, own process",
                    ms(median(tails[1:])),
                    "ms (the parse floor's backlog, as a kernel would have it)",
                ),
            ]
            rows += kernel_rows(
                server, text, reps, tmp, scripted(lambda: bare_httpx(client, base)), data
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = result("streaming", f"1. Streaming overhead ({deltas}-delta reply)", rows, **data)
    failed = [str(row[2]) for row in rows if row[1] == "failed"]
    if failed:  # keep the figures measured so far, but say the run failed
        out["error"] = failed[0]
    return out


def kernel_rows(
    server: TimedServer, text: str, reps: int, tmp: Path, floor: Callable[[], None], data: dict
) -> list[tuple]:
    """(c): `%%elelem` cells in a warm python3 kernel, each right after a floor run.

    "live" cells carry a cell id as JupyterLab sends them (the live widget view streams);
    "headless" ones do not, as nbclient's (static output at the end only).
    """
    kernels = Kernels(tmp / "k")
    env = kernels.env(**server.env("openai"))
    base = server.base_url("openai")
    floor_cell: list[float] = []  #: (c floor): server's last byte → idle
    runs: dict[str, dict[str, list[float]]] = {
        mode: {
            "wall": [],
            "floor": [],
            "iopub": [],
            "first_text": [],
            "first_byte": [],
            "tail": [],
            "floor_tail": [],
            "end_to_idle": [],
        }
        for mode in ("live", "headless")
    }
    with kernels.start("python3", env, cwd=tmp / "ws") as kernel:
        load = kernel.cell("%load_ext elelem_kernel")
        if not load.ok:
            return [("(c) %%elelem cell", "failed", "; ".join(load.errors())[:120])]
        for i in range(reps + 1):
            for mode, run in runs.items():
                time.sleep(SETTLE)  # let the kernel finish what follows its idle message
                before = interleave({"floor": floor}, 1)["floor"][0]
                floor_tail = time.perf_counter() - server.last_bytes[-1]  # its read's backlog
                server.script("openai", Round(text=text))
                served = len(server.first_bytes)
                cell_id = uuid.uuid4().hex[:12] if mode == "live" else None
                cell = kernel.cell("%%elelem -p openai\nhi", cell_id=cell_id)
                if not cell.ok:
                    return [("(c) %%elelem cell", "failed", "; ".join(cell.errors())[:120])]
                seen = cell.first(MARKER)
                if not i:  # the first turn imports the session, providers and widgets
                    data[f"kernel_first_turn_{mode}"] = cell.wall
                    continue
                run["wall"].append(cell.wall)
                run["iopub"].append(cell.count())
                data[f"kernel_kinds_{mode}"] = cell.kinds()
                if seen is not None:
                    run["first_text"].append(seen - server.first_bytes[served])
                run["first_byte"].append(server.first_bytes[served] - cell.start)
                run["tail"].append(cell.end - server.last_bytes[served])
                run["floor"].append(before)
                run["floor_tail"].append(floor_tail)
                ended = cell.first(END)  # live: the footer's update at turn_end
                if ended is not None:
                    run["end_to_idle"].append(cell.end - ended)
            if not i:  # after the first turns, which import httpx themselves (measured above)
                setup = kernel.cell(KERNEL_FLOOR.format(root=str(ROOT), body=BODY))
                if not setup.ok:
                    return [("(c floor) a cell reading the stream", "failed", setup.errors()[0])]
            time.sleep(SETTLE)
            server.script("openai", Round(text=text))
            served = len(server.first_bytes)
            cell = kernel.cell(KERNEL_FLOOR_CELL.format(base=base))
            if not cell.ok:
                return [("(c floor) a cell reading the stream", "failed", "; ".join(cell.errors()))]
            if i:
                floor_cell.append(cell.end - server.last_bytes[served])
    data["kernel"] = runs
    data["kernel_floor_tail"] = floor_cell
    live, headless = runs["live"], runs["headless"]
    return [
        ("(c) %%elelem cell, live view", ms(median(live["wall"])), "ms, execute → idle"),
        ("(c) ÷ (a)", paired(live["wall"], live["floor"]), "× (each after a floor run)"),
        ("(c) iopub messages per turn", median(live["iopub"]), data["kernel_kinds_live"]),
        (
            "(c) execute_request → server's first byte",
            ms(median(live["first_byte"])),
            "ms (the cell's start: the request on the wire)",
        ),
        ("(c) server first byte → first reply text", ms(median(live["first_text"])), "ms"),
        ("(c) server's last byte → idle", ms(median(live["tail"])), "ms (last refresh, freeze)"),
        (
            "(a) server's last byte → read done",
            ms(median(live["floor_tail"])),
            "ms (the floor's own backlog: the server writes faster than a client reads)",
        ),
        ("(c) turn end on iopub → idle", ms(median(live["end_to_idle"])), "ms (freeze)"),
        (
            "(c floor) server's last byte → idle, a cell reading the stream itself",
            ms(median(floor_cell)),
            "ms (same kernel: read, SSE, JSON, one display)",
        ),
        ("(c) first turn in a fresh kernel", ms(data["kernel_first_turn_live"]), "ms"),
        (
            "(c) first turn − a later turn",
            ms(data["kernel_first_turn_live"] - median(live["wall"])),
            "ms",
        ),
        ("(c') headless cell (no cell id)", ms(median(headless["wall"])), "ms, static at end"),
        ("(c') ÷ (a)", paired(headless["wall"], headless["floor"]), "×"),
        ("(c') iopub messages per turn", median(headless["iopub"]), data["kernel_kinds_headless"]),
        ("(c') server first byte → reply text", ms(median(headless["first_text"])), "ms"),
        ("(c') server's last byte → idle", ms(median(headless["tail"])), "ms"),
    ]
