"""Budgets in notebooks: `%%elelem --budget` and `/budget` in a python3 kernel and in the
Elelem kernel, each stop saying how to raise it in that front's words. The model is a
loopback server speaking the OpenAI format, its model priced (gpt-4.1)."""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from jupyter_client.manager import start_new_kernel

from elelem_kernel.cli import install_command
from tests.e2e.kernels import frozen, isolated_env, run, texts, trusted, workspace
from tests.wire_servers import Round, WireServer

pytestmark = pytest.mark.kernel
#: 110k tokens a turn. Token budgets here: a loopback server's model may have no price.
USAGE = {"input": 100_000, "output": 10_000}


@pytest.fixture
def wire():
    with WireServer() as server:
        yield server


@contextmanager
def kernel(name, folder, wire, **extra):
    env = isolated_env(
        folder,
        **wire.env("openai"),
        ELELEM_PROVIDER="openai",
        ELELEM_MODEL="gpt-4.1",
        ELELEM_OPTIONS="max_tokens=1000",
        **extra,
    )
    km, kc = start_new_kernel(kernel_name=name, env=trusted(env, folder), cwd=str(folder))
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_magic_takes_a_budget_per_cell_and_per_session(tmp_path, wire):
    folder = workspace(tmp_path / "magic")
    wire.script("openai", Round(text="Hello.", usage=USAGE), Round(text="Again.", usage=USAGE))
    with kernel("python3", folder, wire) as kc:
        assert run(kc, "%load_ext elelem_kernel")[0]["content"]["status"] == "ok"
        _, msgs = run(kc, "%%elelem --budget '500 tokens'\nhi")
        record = frozen(msgs)["metadata"]["elelem"]
        assert record["stop"] == "budget" and wire.requests == []
        text = frozen(msgs)["data"]["text/plain"]
        assert "%%elelem --budget '" in text and "(this cell) or %elelem /budget" in text
        # the cell's budget was for that cell only
        _, msgs = run(kc, "%%elelem\nhi")
        record = frozen(msgs)["metadata"]["elelem"]
        assert record["stop"] == "end_turn" and "budget" not in record
        _, msgs = run(kc, "%elelem /budget 200k tokens")
        assert "session: **200k tokens**, spent 110k tokens, 90k tokens left" in texts(msgs)
        _, msgs = run(kc, "%%elelem\nagain")
        assert "220k of 200k tokens" in frozen(msgs)["data"]["text/plain"]
        _, msgs = run(kc, "%%elelem\nonce more")
        record = frozen(msgs)["metadata"]["elelem"]
        assert record["stop"] == "budget" and len(wire.requests) == 2
        assert "spent 220k tokens of 200k tokens" in record["error"]
        _, msgs = run(kc, "%%elelem --model mystery-model --budget 2\nhi")
        record = frozen(msgs)["metadata"]["elelem"]
        assert record["stop"] == "error" and len(wire.requests) == 2
        assert "openai/mystery-model: its price is unknown" in record["error"]
        assert "%%elelem --budget '200k tokens' (this cell)" in record["error"]
        reply, msgs = run(kc, "%%elelem --budget 200k\nhi")
        assert reply["content"]["status"] == "error"
        assert "write 200k tokens for tokens" in str(reply["content"]) + texts(msgs)


def test_the_elelem_kernel_says_slash_budget(tmp_path, wire):
    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    folder = workspace(tmp_path / "elelem")
    jupyter_path = str(prefix / "share" / "jupyter")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", jupyter_path)
        with kernel(
            "elelem", folder, wire, JUPYTER_PATH=jupyter_path, ELELEM_BUDGET="500 tokens"
        ) as kc:
            _, msgs = run(kc, "/budget")
            assert "session: **500 tokens**, spent 0 tokens" in texts(msgs)
            _, msgs = run(kc, "hi")
            record = frozen(msgs)["metadata"]["elelem"]
            assert record["stop"] == "budget" and wire.requests == []
            assert "To go on, raise it: /budget " in record["error"]
            assert "%%elelem" not in record["error"]


def test_a_cells_budget_is_its_own_fails_the_cell_and_the_status_shows_the_budget(tmp_path, wire):
    folder = workspace(tmp_path / "cell")
    wire.script("openai", Round(text="Hello.", usage=USAGE), Round(text="Again.", usage=USAGE))
    # a window that holds the 100k-token turns: no compaction between them
    with kernel("python3", folder, wire, ELELEM_CONTEXT_WINDOW="1m") as kc:
        assert run(kc, "%load_ext elelem_kernel")[0]["content"]["status"] == "ok"
        reply, msgs = run(kc, "%%elelem --budget '500 tokens'\nhi")
        assert reply["content"]["status"] == "error" and wire.requests == []
        assert reply["content"]["ename"] == "BudgetStopped"
        record = frozen(msgs)["metadata"]["elelem"]
        assert record["error"].startswith("budget: this cell spent 0 tokens of 500 tokens, ")
        assert re.search(
            r"raise it: %%elelem --budget '[\d.]+k tokens' \(this cell\)", record["error"]
        )
        _, msgs = run(kc, "%elelem")
        assert "| budget | none (set one with %%elelem --budget 2 (this cell)" in texts(msgs)
        # the cell's own budget counts its turn, not what the session spent before
        reply, msgs = run(kc, "%%elelem\nhi")
        assert reply["content"]["status"] == "ok", texts(msgs)
        reply, msgs = run(kc, "%%elelem --budget '100k tokens'\nagain")  # the session: 110k
        assert reply["content"]["status"] == "ok" and len(wire.requests) == 2, texts(msgs)
        footer = frozen(msgs)["data"]["text/plain"].strip().splitlines()[-1]
        assert footer.endswith(" · 110k of 100k tokens"), footer  # the cell's: no /turn
        run(kc, "%elelem /budget 300k tokens")
        _, msgs = run(kc, "%elelem")
        assert "| budget | 300k tokens (spent 220k tokens, 80k tokens left) |" in texts(msgs)


def test_run_all_stops_at_a_budget_stop(tmp_path, wire):
    import nbclient
    import nbformat

    folder = workspace(tmp_path / "runall")
    env = isolated_env(
        folder,
        **wire.env("openai"),
        ELELEM_PROVIDER="openai",
        ELELEM_MODEL="gpt-4.1",
        ELELEM_OPTIONS="max_tokens=1000",
    )
    cells = [
        "%load_ext elelem_kernel",
        "%%elelem --budget '500 tokens'\nhi",
        "print('the next cell ran')",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "python3"}
    runner = nbclient.NotebookClient(
        nb, timeout=120, iopub_timeout=60, resources={"metadata": {"path": str(folder)}}
    )
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="BudgetStopped"):
        runner.execute(env=trusted(env, folder))
    assert nb.cells[2].get("outputs") == [] and wire.requests == []
