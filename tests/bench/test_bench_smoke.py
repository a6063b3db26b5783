"""The benchmarks on tiny sizes, so the code does not rot (no timing asserts): every
benchmark end to end through `python -m bench --smoke`, and the cheapest parts alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import httpx

from bench import __main__ as runner
from bench import images, jupyter_ai, notebook_memory, prefix, streaming, tools_scale
from bench.__main__ import table
from bench.common import REPO, Round, WireServer, long_text


def test_smoke_runs_every_benchmark_end_to_end(tmp_path):
    """`python -m bench --smoke` as a process: every benchmark runs and none fails.

    A private HOME, so the jupyter-ai venv is not made (the stand-in `%%ai` runs) and the
    bench's caches start empty, as on a clean clone."""
    out_json = tmp_path / "results.json"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--out", str(out_json)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    report = json.loads(out_json.read_text())
    assert [r["name"] for r in report["results"]] == list(runner.BENCHMARKS)
    for r in report["results"]:
        assert r["rows"] and "error" not in r, r["name"]
        assert not [row for row in r["rows"] if row[1] == "failed"], r["name"]
        assert r["title"] in out.stdout
    assert "goals" not in report and "figures not judged" in out.stdout


BROKEN = """
NAME = "broken"


def run(quick=False):
    raise RuntimeError("the wire server said no")
"""
FINE = """
from bench.common import result

NAME = "fine"


def run(quick=False, smoke=False):
    return result("fine", "A fine benchmark", [("smoke", smoke, "flag")])
"""


def test_a_failed_benchmark_says_failed_and_the_others_still_print(tmp_path, monkeypatch, capsys):
    """Benchmarks are found by their files (a `run`, named by NAME or the file); one that
    raises gets a "failed" row and the exit code 1, and the next one still runs and prints."""
    folder = tmp_path / "benchx"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "a_broken.py").write_text(BROKEN)
    (folder / "b_fine.py").write_text(FINE)
    (folder / "c_unnamed.py").write_text(FINE.replace('NAME = "fine"', ""))
    (folder / "helper.py").write_text("def helps():\n    pass\n")  # no run: not one
    monkeypatch.syspath_prepend(str(tmp_path))
    found = runner.discover(folder)
    assert found == {
        "broken": "benchx.a_broken",
        "fine": "benchx.b_fine",
        "c_unnamed": "benchx.c_unnamed",
    }
    monkeypatch.setattr(runner, "BENCHMARKS", found)
    assert runner.main(["--smoke", "--out", str(tmp_path / "r.json")]) == 1
    text = capsys.readouterr().out
    assert re.search(r"run +failed +RuntimeError: the wire server said no", text)
    assert "A fine benchmark" in text and re.search(r"smoke +True +flag", text)
    assert "failed: broken" in text


def test_against_jupyter_ai_pairs_only_runs_that_measured_both():
    """A run that saw no reply text (None) leaves its pair out; the table does not crash."""

    def one(wall: float, first: float | None) -> dict:
        return {"wall": wall, "iopub": 4, "kinds": "status 2", "first_text": first}

    runs = {
        "elelem": [one(0.10, 0.02), one(0.10, None), one(0.10, 0.02)],
        "ai": [one(0.20, 0.04), one(0.20, 0.04), one(0.20, 0.04)],
        "ai_stream": [one(0.05, None), one(0.05, 0.01), one(0.05, 0.01)],
    }
    data = {"first_turn": dict.fromkeys(runs, 0.5), "read_only": [one(0.05, None)] * 3}
    rows = {label: value for label, value, _ in jupyter_ai.rows(runs, data)}
    assert rows["ours ÷ %%ai, default (stream: false), first text"] == 0.5
    assert rows["ours ÷ %%ai, default (stream: false), wall"] == 0.5
    assert rows['ours ÷ %%ai -m {"streaming":true}, first text'] == 2.0


def test_a_warm_session_takes_long_replies_turn_after_turn(tmp_path):
    """Two 2,000-word replies in one session: the bench's window keeps the second turn
    from compacting (a request the server's script does not hold)."""
    (tmp_path / "README.md").write_text("# x\n")
    with WireServer() as server:
        server.script("openai", *[Round(text=long_text(2000))] * 2)
        warm = streaming.WarmSession(server.base_url("openai"), tmp_path)
        try:
            warm.turn()
            warm.turn()
        finally:
            warm.close()
        assert server.pending() == 0 and len(server.requests) == 2


def test_floor_and_warm_session_stream_a_reply(tmp_path):
    (tmp_path / "README.md").write_text("# x\n")
    with WireServer() as server, httpx.Client() as client:
        base = server.base_url("openai")
        server.script("openai", *[Round(text=long_text(20))] * 5)
        streaming.bare_httpx(client, base)
        floor = streaming.AsyncFloor(base)
        try:
            floor.raw()
            floor.parsed()
        finally:
            floor.close()
        parsed = subprocess.run(
            [sys.executable, "-c", streaming.PARSED, base],
            cwd=streaming.ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        assert float(parsed.stdout.split()[-1]) > 0  # when it ended, on the shared clock
        warm = streaming.WarmSession(base, tmp_path)
        try:
            warm.turn()
        finally:
            warm.close()
        assert server.pending() == 0


def test_prefix_measures_every_request_of_a_tool_loop(tmp_path):
    ws = prefix.workspace(tmp_path / "ws")
    bodies = prefix.record("openai", "replies", ws, loop_rounds=2, more_turns=1)
    assert len(bodies) == 5  # 2 tool rounds + answer, then a tool round + answer
    measured = prefix.measure([prefix.prompt_order(b) for b in bodies])
    assert len(measured["shares"]) == 4
    assert 0 < measured["cached_tokens"] < measured["tokens"]
    assert measured["billed_tokens"] < measured["tokens"]
    label, value, note = prefix.row("openai", prefix.measure(bodies), measured)
    assert value.endswith("%") and "billed" in note


def test_notebook_memory_small_run():
    out = notebook_memory.run(quick=True, turns=3, big=6)
    assert out["name"] == "notebook"
    assert len(out["data"]["sizes"]) == 3
    assert out["data"]["large_turns"] == 6
    assert all(len(row) == 3 for row in out["rows"])


def test_tools_rows_on_a_tiny_tree(tmp_path):
    root = tools_scale.make_tree(tmp_path / "tree", 60)
    data: dict = {}
    rows = tools_scale.tree_rows(root, 1, data)
    rows += tools_scale.read_rows(tmp_path, 200_000, data)
    assert data["grep_matches"]
    assert data["read_peak_growth"] >= 0
    labels = [row[0] for row in rows]
    assert "list tool" in labels and any("read head" in label for label in labels)


def test_table_prints_every_row_and_failures():
    results = [
        {"title": "T", "seconds": 1.0, "rows": [["a", 1, "ms"]]},
        {"title": "U", "seconds": 0.0, "rows": [], "error": "boom"},
    ]
    text = table(results)
    assert "a" in text and "FAILED: boom" in text


def test_goals_read_their_figures_and_say_which_are_met():
    from bench import goals

    results = [
        {"name": "tools", "rows": [["list ÷ git ls-files", 1.2, "×"]]},
        {"name": "notebook", "rows": [["restore ÷ nbformat.read", 1.8, "×"]]},
        {
            "name": "streaming",
            "rows": [
                ["(c) server's last byte → idle", 70, "ms"],
                ["(c floor) server's last byte → idle, a cell reading the stream itself", 40, "ms"],
                ["(c) ÷ (a)", 2.0, "×"],
                ["(a3) async read + SSE + JSON ÷ (a)", 1.4, "×"],
            ],
        },
    ]
    checked = {c["figure"]: c for c in goals.check(results)}
    assert checked["list tool ÷ git ls-files, 20,000 files"]["met"] is True
    assert checked["restore 1,000 turns ÷ nbformat.read"]["met"] is False
    assert checked["elelem-kernel ask process ÷ a fresh python + httpx drain"]["met"] is None
    tail = "server's last byte → idle (last refresh + freeze), 2,000-word reply"
    assert checked[tail]["floor"] == 40
    text = goals.table(list(checked.values()))
    assert "NOT met" in text and "not run" in text and "1 of 4 measured goals met" in text
    # a goal under its floor says so; one above its floor (1.5 over 1.4) does not
    assert text.count("under this run's floor") == 1 and "floor, 40 ms" in text


def test_every_goal_names_a_row_its_benchmark_prints():
    import inspect

    from bench import (
        acp_first_token,
        goals,
        jupyter_ai,
        notebook_memory,
        open_notebook,
        startup,
        streaming,
        tools_scale,
    )

    sources = {
        "startup": inspect.getsource(startup),
        "streaming": inspect.getsource(streaming),
        "jupyter_ai": inspect.getsource(jupyter_ai),
        "notebook": inspect.getsource(notebook_memory),
        "tools": inspect.getsource(tools_scale),
        "acp_first_token": inspect.getsource(acp_first_token),
        "open_notebook": inspect.getsource(open_notebook),
    }
    for goal in goals.GOALS:
        row = goal.row.replace("%%ai, default (stream: false)", "{labels[name]}")
        assert row in sources[goal.benchmark] or goal.row in sources[goal.benchmark], goal
        assert goal.floor is None or goal.floor in sources[goal.benchmark], goal


def test_prefix_with_a_small_window_compacts_and_bills_the_summary(tmp_path):
    ws = prefix.workspace(tmp_path / "ws")
    bodies = prefix.record("openai", "full", ws, loop_rounds=8, more_turns=2, window=3_000)
    summaries = [b for b in bodies if b"You compact" in b]
    assert len(summaries) >= 1 and len(bodies) == 9 + 4 + len(summaries)
    assert prefix.SUMMARY.encode() in bodies[-1]  # later requests carry the summary


def test_images_measures_the_request_that_carries_three_plots():
    import pytest

    pytest.importorskip("matplotlib")
    got = images.measure(True, 2, 1.5)
    assert got["images"] == 3 and len(got["sizes"]) == 3
    assert got["request_bytes"] > got["image_bytes"] > 0
    assert 0 < got["estimated_tokens"] < got["base64_as_text_tokens"]
