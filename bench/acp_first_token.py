"""The ACP agent's first answer: time to the first reply token through the ACP SDK's own
client, against `elelem-kernel ask` for the same prompt (issue 39, goal ≤ 1.5×).

Both run the demo model in a fresh process in an empty folder. `ask`: from the spawn to
the first byte of the reply on stdout. ACP: from the spawn (`spawn_agent_process`) through
initialize, session/new and session/prompt to the first `agent_message_chunk`; the times
to the `initialize` and `session/new` answers are reported too. Runs alternate so load
hits both alike.

No floor is measured: the agent speaks ACP without the SDK (the floor was `ask` plus
importing the SDK, which the agent no longer does), so what it does beyond `ask` (one more
module, a session notebook written, two round trips) is its own cost, not a floor.

`python -m bench --only acp_first_token` runs it with the others' table and goals;
`python -m bench.acp_first_token [--quick]` prints its rows alone.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import clean_env, median, ms, paired, result

AGENT = str(Path(sys.executable).parent / "elelem-kernel")
PROMPT = "hi"


def ask_first_token(env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [AGENT, "ask", "-p", "demo", PROMPT],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    first = proc.stdout.read(1)
    took = time.perf_counter() - start
    proc.stdout.read()
    proc.wait()
    if not first:
        raise RuntimeError("ask printed nothing")
    return took


class FirstChunk:
    """An ACP client that notes when the first reply chunk arrives."""

    def __init__(self) -> None:
        self.first = asyncio.get_running_loop().create_future()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk" and not self.first.done():
            self.first.set_result(time.perf_counter())

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the demo's look-around asks nothing")


async def acp_first_token(env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Seconds from the spawn to the first reply chunk, the `initialize` answer and the
    `session/new` answer."""
    from acp import spawn_agent_process, text_block

    client = FirstChunk()
    start = time.perf_counter()
    async with spawn_agent_process(client, AGENT, "acp", "-p", "demo", env=env, cwd=cwd) as (
        conn,
        _,
    ):
        await conn.initialize(protocol_version=1)
        ready = time.perf_counter() - start
        new = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        made = time.perf_counter() - start
        await conn.prompt(session_id=new.session_id, prompt=[text_block(PROMPT)])
        first = await client.first
    return first - start, ready, made


def run(quick: bool = False, reps: int | None = None) -> dict:
    reps = reps or (3 if quick else 7)
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-acp-"))
    env = clean_env(HOME=str(tmp / "home"), ELELEM_ACP_SESSIONS=str(tmp / "sessions"))
    ws = tmp / "ws"
    ws.mkdir()
    asks: list[float] = []
    firsts: list[float] = []
    readies: list[float] = []
    sessions: list[float] = []
    try:
        for n in range(reps + 1):  # the first pair warms the caches
            took = ask_first_token(env, ws)
            first, ready, made = asyncio.run(acp_first_token(env, ws))
            if n:
                asks.append(took)
                firsts.append(first)
                readies.append(ready)
                sessions.append(made)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = [
        ("ask: first token", ms(median(asks)), "ms"),
        ("acp: initialize answered", ms(median(readies)), "ms"),
        ("acp: session/new answered", ms(median(sessions)), "ms"),
        ("acp: first token (SDK client)", ms(median(firsts)), "ms"),
        ("acp first token ÷ ask", paired(firsts, asks), "× (goal ≤ 1.5)"),
    ]
    return result(
        "acp_first_token",
        "ACP first answer",
        rows,
        ask=asks,
        acp=firsts,
        initialize=readies,
        session=sessions,
    )


if __name__ == "__main__":
    out = run(quick="--quick" in sys.argv)
    for label, value, unit in out["rows"]:
        print(f"  {label.ljust(32)}  {value!s:>10}  {unit}")
