"""The fixed prompt: what every request sends before the person's first word.

Per mode, the estimated tokens of the system prompt and the tool descriptions of a session
with the built-in tools, as a large window gets them and as a small one does (a known
window under `context.BRIEF_BELOW` tokens gets the brief forms). The goal: build mode at
most 1,000 tokens in a small window. On a CPU without llama.cpp's prompt cache, every
request pays this again.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.common import result
from elelem_kernel.agent.fitting import fixed_tokens
from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import MODES
from elelem_kernel.assembly.workspace_tools import add_workspace_tools
from elelem_kernel.providers.echo import EchoProvider

#: The small window measured (tokens), and the most build mode may use there.
SMALL = 8_192
GOAL = 1_000


def sizes(workspace: Path) -> dict[str, dict[str, int]]:
    """`{"large": {mode: tokens}, "small": {mode: tokens}}` for a session in `workspace`."""
    session = Session(EchoProvider(), provider_name="echo", workspace=workspace)
    add_workspace_tools(session.toolbox, session.tool_context)
    out = {}
    for label, window in (("large", None), ("small", SMALL)):
        session.facts.context_window = window
        out[label] = {mode: fixed_tokens(session, mode) for mode in MODES}
    return out


def run(quick: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-fixed-"))
    try:
        measured = sizes(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for mode in MODES:
        large, small = measured["large"][mode], measured["small"][mode]
        note = f"≤ {GOAL:,} goal" if mode == "build" else ""
        rows.append((f"{mode}: window ≥ 16k", large, "tokens (estimated)"))
        rows.append((f"{mode}: window {SMALL:,}", small, f"tokens (estimated) {note}".strip()))
    return result("fixed_prompt", "Fixed prompt per mode (system prompt + tools)", rows, **measured)


if __name__ == "__main__":
    for row in run()["rows"]:
        print(*row, sep="\t")
