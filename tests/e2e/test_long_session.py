"""Eight long turns against a 6,000-token window: every request fits, nothing is dropped
silently, and the first turn's fact still reaches the model in the eighth, through the
summary. Once with `elelem-kernel ask --notebook` (a new process a turn, restoring the
compactions from the notebook) and once in a kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.e2e.kernels import isolated_env
from tests.wire_servers.summarising import FACT, SummarisingServer

pytestmark = pytest.mark.kernel

WINDOW = 6_000
WORDS = ["PELICAN", "HARBOUR", "SAFFRON", "GRANITE", "MEADOW", "LANTERN", "CITADEL", "ORCHID"]
FILLER = "The weather report says little of use here, and it says it at length. " * 42


def prompts() -> list[str]:
    """Eight prompts of about 800 tokens, each holding one fact."""
    return [f"Remember FACT-{i + 1}-{word}. {FILLER}" for i, word in enumerate(WORDS)]


def check_requests(server: SummarisingServer) -> list[dict]:
    """Every request fits the window; returns the turns' requests (those with tools)."""
    posts = [r for r in server.requests if r.method == "POST"]
    assert posts and all(len(r.raw) / 4 < WINDOW for r in posts), [len(r.raw) for r in posts]
    summaries = [r for r in posts if not r.body.get("tools")]
    assert summaries, "no compaction happened"
    return [r for r in posts if r.body.get("tools")]


def check_eighth(request: dict) -> None:
    """The eighth request: every earlier fact reaches the model, the first one only through
    the summary (its long prompt is gone)."""
    seen = json.dumps(request.body["messages"])
    facts = set(FACT.findall(seen))
    assert {f"FACT-{i + 1}-{w}" for i, w in enumerate(WORDS)} <= facts
    assert prompts()[0] not in seen
    assert "[Summary of the earlier conversation" in seen


def records(path: Path) -> list[dict]:
    nb = nbformat.read(path, as_version=4)
    return [
        o["metadata"]["elelem"]
        for c in nb.cells
        for o in c.get("outputs", [])
        if "elelem" in o.get("metadata", {})
    ]


def test_eight_long_turns_with_the_cli_and_a_notebook(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)
    with SummarisingServer() as server:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and not k.startswith(("ELELEM_", "OPENAI_"))
        }
        env.update(server.env("openai"), HOME=str(tmp_path), ELELEM_CONTEXT_WINDOW=str(WINDOW))
        shown = []
        for prompt in prompts():
            r = subprocess.run(
                [sys.executable, "-m", "elelem_kernel.cli", "ask", "-p", "openai"]
                + ["--notebook", str(path), prompt],
                cwd=tmp_path,
                input="",
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
            )
            assert r.returncode == 0, r.stderr
            shown.append(r.stderr)
        turns = check_requests(server)
    assert len(turns) == 8
    check_eighth(turns[-1])
    assert "FACT-1-PELICAN" in records(path)[-1]["reply"]  # the model saw it

    saved = records(path)
    compactions = [r["compaction"] for r in saved if "compaction" in r]
    assert compactions and not any("failed" in c for c in compactions)
    assert all(r["v"] == (2 if "compaction" in r else 1) for r in saved)
    notes = [line for text in shown for line in text.splitlines() if "compacted" in line]
    assert len(notes) == len(compactions)  # each compaction was said where it happened
    for record, request in zip(saved, turns, strict=True):  # the meter is what was sent
        assert record["context"] == {"used": len(request.raw) // 4, "window": WINDOW,
                                     "estimated": False}  # fmt: skip
    meters = [line for text in shown for line in text.splitlines() if " ctx " in line]
    assert len(meters) == 8 and f"/{WINDOW / 1000:.1f}k" in meters[-1]


def test_eight_long_turns_in_a_kernel(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    cells = [nbformat.v4.new_code_cell("%load_ext elelem_kernel")]
    cells += [nbformat.v4.new_code_cell(f"%%elelem -p openai\n{p}") for p in prompts()]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "python3"}
    with SummarisingServer() as server:
        env = isolated_env(folder, **server.env("openai"), ELELEM_CONTEXT_WINDOW=str(WINDOW))
        # iopub_timeout: nbclient's 4 s loses outputs on a loaded machine
        NotebookClient(
            nb, timeout=120, iopub_timeout=60, resources={"metadata": {"path": str(folder)}}
        ).execute(env=env)
        turns = check_requests(server)
    assert len(turns) == 8
    check_eighth(turns[-1])
    saved = [o for c in nb.cells for o in c.get("outputs", []) if "elelem" in o.get("metadata", {})]
    compacted = [o for o in saved if "compaction" in o["metadata"]["elelem"]]
    assert compacted
    for output in compacted:
        assert "compacted" in output["data"]["text/plain"]
        assert "<details" in output["data"]["text/html"]
    assert "FACT-1-PELICAN" in saved[-1]["metadata"]["elelem"]["reply"]
    assert f"/{WINDOW / 1000:.1f}k" in saved[-1]["data"]["text/plain"]
