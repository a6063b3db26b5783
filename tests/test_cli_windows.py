"""`ask --notebook` against a loopback llama.cpp-shaped server: what one run learnt of the
model (the calibration of its estimates) is there for the next run."""

from __future__ import annotations

import json

import pytest

from tests.test_cli import cli, folder  # noqa: F401  (the command runner and its folder)
from tests.wire_servers import Round, WireServer
from tests.wire_servers.local_servers import llama_cpp_info


@pytest.fixture
def wire():
    with WireServer() as server:
        server.info.update(llama_cpp_info("smollm2", n_ctx=200_000))
        yield server


def ask(wire, folder, *args):  # noqa: F811
    env = {**wire.env("openai"), "ELELEM_MODEL": "smollm2"}
    return cli("ask", "-p", "openai", "--notebook", "nb.ipynb", *args, cwd=folder, env=env)


def records(folder) -> list[dict]:  # noqa: F811
    cells = json.loads((folder / "nb.ipynb").read_text())["cells"]
    return [
        o["metadata"]["elelem"]
        for c in cells
        for o in c.get("outputs", [])
        if "elelem" in o.get("metadata", {})
    ]


def test_the_calibration_of_one_run_is_restored_in_the_next(wire, folder):  # noqa: F811
    wire.script("openai", Round(text="one", usage={"input": 40_000}))
    assert ask(wire, folder, "one").returncode == 0
    first = records(folder)[-1]
    assert first["calibration"] == 4.0  # the server counted far more than the estimate
    wire.script("openai", Round(text="two", usage={"input": 0}))  # this run counts nothing
    r = ask(wire, folder, "two")
    assert r.returncode == 0 and "restored 1 turn" in r.stderr, r.stderr
    second = records(folder)[-1]
    assert second["prompt"] == "two" and second["calibration"] == 4.0
    assert second["context"]["estimated"] is True
    raw = len(json.dumps(wire.requests[-1].body)) / 3.5  # about the uncalibrated estimate
    assert second["context"]["used"] > 2 * raw  # scaled by the restored factor
