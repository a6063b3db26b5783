"""A turn of the Elelem kernel (a real process) on a model of simonw/llm's plugins:
llm-echo calls the `read` tool and gets its result back as llm's tool_results."""

from __future__ import annotations

import json

import pytest
from jupyter_client.manager import start_new_kernel

from elelem_kernel.cli import install_command
from tests.e2e.kernels import frozen, isolated_env, run, texts, workspace

pytestmark = pytest.mark.kernel
pytest.importorskip("llm_echo")


@pytest.fixture(scope="module")
def kc(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    assert install_command.main(["--prefix", str(prefix)]) == 0
    folder = workspace(tmp_path_factory.mktemp("llm"))
    (folder / "notes.txt").write_text("the answer is 42\n")
    env = isolated_env(
        folder,
        JUPYTER_PATH=str(prefix / "share" / "jupyter"),
        LLM_USER_PATH=str(tmp_path_factory.mktemp("llm-home")),
        ELELEM_PROVIDER="llm",
        ELELEM_MODEL="echo",
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
        km, kc = start_new_kernel(kernel_name="elelem", env=env, cwd=str(folder))
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def test_a_tool_round_trip_through_llm_in_a_kernel_turn(kc):
    prompt = {
        "prompt": "look",
        "tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}],
    }
    reply, msgs = run(kc, json.dumps(prompt))
    assert reply["content"]["status"] == "ok", texts(msgs)
    record = frozen(msgs)["metadata"]["elelem"]
    assert (record["provider"], record["model"], record["stop"]) == ("llm", "echo", "end_turn")
    first, second = record["rounds"]
    [call] = first["calls"]
    assert call["name"] == "read" and call["ok"] is True
    [result] = json.loads(second["text"])["tool_results"]
    assert result["tool_call_id"] == call["id"] and "the answer is 42" in result["output"]
    assert record["usage"]["input"] > 0


def test_option_command_sets_an_llm_model_option(kc):
    reply, msgs = run(kc, "/option thinking true")
    assert "thinking=true" in texts(msgs)
    reply, msgs = run(kc, "hello")
    record = frozen(msgs)["metadata"]["elelem"]
    assert (
        record["rounds"][0]["thinking"] == "First I consider the prompt, then I decide what to say."
    )
    reply, msgs = run(kc, "/option nonsense 1")
    assert "unknown option for llm model echo: nonsense" in texts(msgs)
