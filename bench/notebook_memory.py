"""5. Notebook memory at scale: bytes per turn, and restoring 1,000 turns.

200 real turns (a session with the workspace tools and a scripted offline model: one
`read` call, then a ~120-word answer) are appended to a notebook with the store's
`append_turn`, as `elelem-kernel ask --notebook` does; the file size is noted after each.
Then the 200 turns are copied (fresh turn and cell ids) into a 1,000-turn notebook, and
restoring it (`store.restore_into` into a fresh session: read, validate every record,
rebuild the conversation) is timed against a bare `nbformat.read` of the same file.
"""

from __future__ import annotations

import asyncio
import copy
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.common import interleave, median, ms, paired, ratio, result
from elelem_kernel.events import Provider

NAME = "notebook"

ANSWER = " ".join(
    ["The README describes a small project with two modules; each has a few functions."] * 8
)


class ScriptedReader(Provider):
    """An offline model: reads README.md, then answers (so records hold a real tool call)."""

    model = "bench"

    async def fetch(self, messages: list[dict], tools: list[dict], emit: Any) -> None:
        n = len(messages)
        if messages[-1]["role"] == "user":
            emit(
                {"type": "doing", "id": f"c{n}", "name": "read", "arguments": {"path": "README.md"}}
            )
            emit({"type": "stop", "reason": "tool_use", "truncated": False})
        else:
            for word in ANSWER.split(" "):
                emit({"type": "saying", "text": word + " "})
            emit({"type": "usage", "input": 1200 + 40 * n, "output": 160})
            emit({"type": "stop", "reason": "end_turn", "truncated": False})


def session_for(ws: Path) -> Any:
    from elelem_kernel.assembly.sessions import new_session

    session = new_session(provider="echo", workspace=ws, mode="plan")
    session.facts.provider = ScriptedReader()
    session.facts.provider_name = "bench"
    return session


def write_turns(path: Path, ws: Path, turns: int) -> tuple[list[int], list[float]]:
    """Run and append `turns` turns; the file size and the append time after each."""
    from elelem_kernel.agent.record import new_id
    from elelem_kernel.render.static import bundle
    from elelem_kernel.store.notebook import append_turn

    session = session_for(ws)
    sizes, appends = [], []

    async def converse() -> None:
        for i in range(turns):
            turn = await session.turn(f"Question {i}: what does the README say?", cell=new_id())
            mtime = path.stat().st_mtime_ns if path.exists() else None
            start = time.perf_counter()
            append_turn(path, turn.record, *bundle(turn.record), expected_mtime_ns=mtime)
            appends.append(time.perf_counter() - start)
            sizes.append(path.stat().st_size)

    asyncio.run(converse())
    return sizes, appends


def scale_up(source: Path, target: Path, turns: int) -> None:
    """A notebook of `turns` turn cells, copied from `source`'s with fresh ids."""
    import nbformat

    nb = nbformat.read(source, as_version=4)
    head = [c for c in nb.cells if not _record_of(c)]
    cells = [c for c in nb.cells if _record_of(c)]
    conversation = uuid.uuid4().hex
    out = []
    for i in range(turns):
        cell = copy.deepcopy(cells[i % len(cells)])
        cell.id = uuid.uuid4().hex[:16]
        record = _record_of(cell)
        record.update(turn=uuid.uuid4().hex, cell=cell.id, conversation=conversation)
        out.append(cell)
    nb.cells = head + out
    nbformat.write(nb, target)


def breakdown(path: Path) -> dict[str, int]:
    """Median bytes per turn cell of its parts: source, record, each mimetype."""
    import json

    import nbformat

    parts: dict[str, list[int]] = {}
    for cell in nbformat.read(path, as_version=4).cells:
        if _record_of(cell) is None:
            continue
        output = cell.outputs[0]
        sizes = {"source": len(cell.source.encode())}
        sizes["record"] = len(json.dumps(output.metadata.get("elelem")).encode())
        for mime, value in output.data.items():
            sizes[mime] = len(json.dumps(value).encode())
        for key, size in sizes.items():
            parts.setdefault(key, []).append(size)
    return {key: int(median(values)) for key, values in parts.items()}


def _record_of(cell: Any) -> dict | None:
    for output in cell.get("outputs", []):
        record = output.get("metadata", {}).get("elelem")
        if isinstance(record, dict):
            return record
    return None


def restore(path: Path, ws: Path) -> int:
    """Restore the notebook into a fresh session, as a kernel does on its first prompt."""
    from elelem_kernel.jupyter.restore import restore_into

    session = session_for(ws)
    line = restore_into(session, {}, {"ELELEM_NOTEBOOK": str(path)}, force=True)
    if not line or "restored" not in line:
        raise RuntimeError(f"restore failed: {line}")
    return sum(len(c.turns) for c in session.conversations.by_id.values())


def run(
    quick: bool = False, smoke: bool = False, turns: int | None = None, big: int | None = None
) -> dict:
    turns = turns or (3 if smoke else 50 if quick else 200)
    big = big or (6 if smoke else 250 if quick else 1000)
    reps = 1 if smoke else 3 if quick else 5
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-notebook-"))
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Project\n\nTwo modules, a few functions each.\n" * 4)
    try:
        small = ws / "turns.ipynb"
        sizes, appends = write_turns(small, ws, turns)
        parts = breakdown(small)
        large = ws / "large.ipynb"
        scale_up(small, large, big)
        restored = restore(large, ws)
        if restored != big:
            raise RuntimeError(f"restored {restored} turns of {big}")
        import nbformat

        t = interleave(
            {
                "restore": lambda: restore(large, ws),
                "nbformat_read": lambda: nbformat.read(large, as_version=4),
            },
            reps,
        )
        growth = [b - a for a, b in zip(sizes[:-1], sizes[1:], strict=True)]
        tenth = max(1, turns // 10)
        data = {
            "turns": turns,
            "sizes": sizes,
            "appends": appends,
            "large_turns": big,
            "large_bytes": large.stat().st_size,
            "parts": parts,
            **t,
        }
        rows = [
            (f"notebook after {turns} turns", round(sizes[-1] / 1e6, 2), "MB"),
            ("bytes per turn, median", int(median(growth)), "B"),
            ("  of which", "", ", ".join(f"{k} {v:,}" for k, v in parts.items())),
            (
                "bytes per turn, first vs last tenth",
                f"{int(median(growth[:tenth])):,} / {int(median(growth[-tenth:])):,}",
                "B (equal = linear growth)",
            ),
            (
                "append_turn time, first vs last tenth",
                f"{ms(median(appends[:tenth]))} / {ms(median(appends[-tenth:]))}",
                "ms (in place after the first)",
            ),
            (
                "append_turn, last tenth ÷ first tenth",
                ratio(median(appends[-tenth:]), median(appends[:tenth])),
                "× (≤ 2: appending does not grow with the file)",
            ),
            (
                f"restore {big} turns ({large.stat().st_size / 1e6:.1f} MB)",
                ms(median(t["restore"])),
                "ms",
            ),
            ("nbformat.read of the same file", ms(median(t["nbformat_read"])), "ms"),
            ("restore ÷ nbformat.read", paired(t["restore"], t["nbformat_read"]), "×"),
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result("notebook", f"5. Notebook memory ({turns} turns; restore {big})", rows, **data)
