"""7. Long session: 300 turns in one Elelem kernel with the demo provider.

The kernel's resident memory (VmRSS) is read after 1, 10, 100 and 300 turns; each turn is
a prompt cell (the demo model lists the workspace and reads the README through the real
tools, then answers), with the demo's streaming delay set to 0. Two kernels: cells sent
with a cell id as JupyterLab sends them (the live widget view), and without, as nbclient
sends them (static output only). Growth per turn after the first 10 shows whether
anything grows without bound; widget comms opened and never closed are counted from the
iopub messages; turn times early vs late show whether turns slow down.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.common import median, ms, result
from bench.kernels import Kernels

NAME = "long_session"

MODES = {"live": "live view (cell ids, as JupyterLab)", "headless": "headless (as nbclient)"}


def session(kernels: Kernels, ws: Path, turns: int, live: bool) -> dict:
    """Run `turns` prompt cells in a fresh Elelem kernel; RSS at the marks, times, comms."""
    env = kernels.env(ELELEM_PROVIDER="demo", ELELEM_DEMO_DELAY="0")
    marks = {m for m in (1, 10, 100, 300, turns) if m <= turns}
    rss: dict[int, int] = {}
    walls: list[float] = []
    unclosed = 0
    with kernels.start("elelem", env, cwd=ws) as kernel:
        rss[0] = kernel.rss()
        for i in range(1, turns + 1):
            cell_id = f"cell{i}" if live else None
            cell = kernel.cell(f"Turn {i}: what is in this folder?", cell_id=cell_id)
            if not cell.ok:
                raise RuntimeError(f"turn {i} failed: {'; '.join(cell.errors())}")
            walls.append(cell.wall)
            kinds = [m["msg_type"] for _, m in cell.msgs]
            unclosed += kinds.count("comm_open") - kinds.count("comm_close")
            if i in marks:
                rss[i] = kernel.rss()
    return {"rss": rss, "walls": walls, "unclosed_comms": unclosed}


def run(quick: bool = False, smoke: bool = False, turns: int | None = None) -> dict:
    turns = turns or (2 if smoke else 30 if quick else 300)
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-long-"))
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Long session\n\nA folder for a long conversation.\n")
    kernels = Kernels(tmp / "k")
    data: dict = {}
    rows = []
    try:
        for mode, label in MODES.items():
            one = data[mode] = session(kernels, ws, turns, live=mode == "live")
            rss = one["rss"]
            earlier = [k for k in rss if k != turns]
            rows.append(
                (
                    f"{label}: kernel RSS",
                    round(rss[turns] / 1e6, 1),
                    f"MB (after turns {', '.join(map(str, earlier))}: "
                    f"{', '.join(f'{rss[k] / 1e6:.1f}' for k in earlier)})",
                )
            )
            if turns > 10:
                per_turn = (rss[turns] - rss[10]) / (turns - 10)
                rows.append((f"  growth per turn, 10 → {turns}", round(per_turn / 1e3, 1), "kB"))
            rows.append(
                (
                    "  widget comms opened, never closed",
                    one["unclosed_comms"],
                    f"after {turns} turns",
                )
            )
            tenth = max(1, turns // 10)
            walls = one["walls"]
            rows.append(
                (
                    "  turn time, first vs last tenth",
                    f"{ms(median(walls[:tenth]))} / {ms(median(walls[-tenth:]))}",
                    "ms (execute → idle)",
                )
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result("long_session", f"7. Long session ({turns} turns)", rows, **data)
