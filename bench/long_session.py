"""7. Long session: 300 turns in one Elelem kernel with the demo provider.

The kernel's resident memory (VmRSS) is read after 1, 10, 100 and 300 turns; each turn is
a prompt cell (the demo model lists the workspace and reads the README through the real
tools, then answers), with the demo's streaming delay set to 0. Growth per turn after the
first 10 shows whether anything grows without bound; turn times early vs late show
whether turns slow down as the conversation grows.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .common import median, ms, result
from .kernels import Kernels


def run(quick: bool = False, turns: int | None = None) -> dict:
    turns = turns or (30 if quick else 300)
    marks = sorted({m for m in (1, 10, 100, 300, turns) if m <= turns})
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-long-"))
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Long session\n\nA folder for a long conversation.\n")
    kernels = Kernels(tmp / "k")
    env = kernels.env(ELELEM_PROVIDER="demo", ELELEM_DEMO_DELAY="0")
    rss: dict[int, int] = {}
    walls: list[float] = []
    try:
        with kernels.start("elelem", env, cwd=ws) as kernel:
            rss[0] = kernel.rss()
            for i in range(1, turns + 1):
                cell = kernel.cell(f"Turn {i}: what is in this folder?")
                if not cell.ok:
                    raise RuntimeError(f"turn {i} failed: {'; '.join(cell.errors())}")
                walls.append(cell.wall)
                if i in marks:
                    rss[i] = kernel.rss()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    mb = {k: round(v / 1e6, 1) for k, v in rss.items()}
    rows = [(f"kernel RSS after {k} turns", v, "MB") for k, v in mb.items()]
    if turns > 10:
        per_turn = (rss[turns] - rss[10]) / (turns - 10)
        rows.append((f"growth per turn, turns 10 → {turns}", round(per_turn / 1e3, 1), "kB"))
    tenth = max(1, turns // 10)
    rows.append(
        (
            "turn time, first vs last tenth",
            f"{ms(median(walls[:tenth]))} / {ms(median(walls[-tenth:]))}",
            "ms (execute → idle)",
        )
    )
    return result("long_session", f"7. Long session ({turns} turns)", rows, rss=rss, walls=walls)
