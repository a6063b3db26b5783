"""The site policy in notebooks: the `%%elelem` magic in a python3 kernel and the Elelem
kernel, each a real kernel through jupyter_client, the model a loopback server speaking the
OpenAI format. Every key the administrator sets holds in both, in each front's words."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from jupyter_client.manager import start_new_kernel

from elelem_kernel.cli import install_command
from tests.e2e.kernels import frozen, isolated_env, run, texts, trusted, workspace
from tests.wire_servers import Round, WireServer

pytestmark = pytest.mark.kernel
USAGE = {"input": 100_000, "output": 10_000}
WORDS = "Ask it-help@example.com for more."


@pytest.fixture
def wire():
    with WireServer() as server:
        yield server


def site_policy(wire):
    return {
        "providers": {"allow": ["openai"]},
        "models": {"allow": ["gpt-4.1*"], "block": ["*-preview"]},
        "default": {"provider": "openai", "model": "gpt-4.1", "base_url": wire.base_url("openai")},
        "options": {"openai": {"max_tokens": 1000}},
        "modes": {"allow": ["plan", "build", "verify"]},
        "tools": {"deny": ["bash"], "ask": ["write"]},
        "mcp": {"allow": ["notes"]},
        "plugins": {"project": False},
        "budget": {"day": "111k tokens", "session": "300k tokens"},
        "message": WORDS,
    }


@contextmanager
def kernel(name, folder, site, jupyter_path=None):
    extra = {"JUPYTER_PATH": jupyter_path} if jupyter_path else {}
    env = isolated_env(
        folder, OPENAI_API_KEY="test-key", ELELEM_PROVIDER="", ELELEM_POLICY=str(site), **extra
    )
    agents = folder.parent / f"{folder.name}-state" / "home" / ".agents"
    agents.mkdir(parents=True, exist_ok=True)
    servers = {"notes": {"command": "python3"}, "web": {"command": "npx", "args": ["x"]}}
    (agents / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    km, kc = start_new_kernel(kernel_name=name, env=trusted(env, folder), cwd=str(folder))
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def said(kc, code):
    reply, msgs = run(kc, code)
    return str(reply["content"]) + texts(msgs)


def error(call):
    result = call["result"]
    return json.loads(result)["error"] if isinstance(result, str) else result["error"]


def exercise(kc, wire, folder, site, command, turn):
    """Every key, in the front whose slash command starts with `command` and whose turn
    cells start with `turn`."""
    source = f"the site policy ({site}, set by your administrator)"
    assert str(site) in said(kc, f"{command}policy")
    assert '"deny": ["bash"]' in said(kc, f"{command}policy")
    text = said(kc, f"{command}provider anthropic")
    assert (
        f'provider "anthropic" is not allowed by {source}; it allows providers: openai. {WORDS}'
        in text
    )
    text = said(kc, f"{command}model gpt-4.1-preview")
    assert f'model "gpt-4.1-preview" is not allowed by {source}' in text
    assert "mode auto is not allowed by" in said(kc, f"{command}mode auto")
    assert "max_tokens=5000 for openai is not allowed" in said(
        kc, f"{command}option max_tokens 5000"
    )
    assert f"a budget of 400k tokens per session is more than {source}" in said(
        kc, f"{command}budget 400k tokens"
    )
    text = said(kc, f"{command}mcp")
    assert f'MCP server "web" is not allowed by {source}' in text
    assert wire.requests == []

    said(kc, f"{command}allow write bash")
    wire.script(
        "openai",
        Round(
            calls=[("bash", {"command": "touch ran"}), ("write", {"path": "a.txt", "content": "x"})]
        ),
        Round(text="Done."),
        Round(text="Big.", usage=USAGE),
    )
    _, msgs = run(kc, f"{turn}go")
    record = frozen(msgs)["metadata"]["elelem"]
    first = wire.requests[0].body
    assert first["model"] == "gpt-4.1" and first["max_tokens"] == 1000  # the policy's defaults
    offered = [t["function"]["name"] for t in first["tools"]]
    assert "bash" not in offered and "read" in offered
    assert "touch" not in offered  # the trusted project plugin's tool: project plugins are off
    bash, write = record["rounds"][0]["calls"]
    assert not bash["ok"] and f'tool "bash" is not allowed by {source}' in error(bash)
    assert not write["ok"] and f"{source} asks before every write call" in error(write)
    assert not (folder / "ran").exists() and not (folder / "a.txt").exists()

    _, msgs = run(kc, f"{turn}big")
    assert frozen(msgs)["metadata"]["elelem"]["stop"] == "end_turn"
    _, msgs = run(kc, f"{turn}again")
    record = frozen(msgs)["metadata"]["elelem"]
    assert record["stop"] == "budget" and len(wire.requests) == 3
    assert "budget: today spent 110k tokens of 111k tokens" in record["error"]
    assert f"This limit (111k tokens per day) is set by {source}." in record["error"]


def test_the_magic_keeps_the_site_policy(tmp_path, wire):
    folder = workspace(tmp_path / "magic")
    site = tmp_path / "elelem_policy.json"
    site.write_text(json.dumps(site_policy(wire)))
    with kernel("python3", folder, site) as kc:
        assert run(kc, "%load_ext elelem_kernel")[0]["content"]["status"] == "ok"
        text = said(kc, "%%elelem -p anthropic\nhi")
        assert 'provider "anthropic" is not allowed by the site policy' in text
        assert "mode auto is not allowed" in said(kc, "%%elelem --mode auto\nhi")
        assert 'model "o3" is not allowed' in said(kc, "%%elelem --model o3\nhi")
        exercise(kc, wire, folder, site, "%elelem /", "%%elelem\n")


def test_the_elelem_kernel_keeps_the_site_policy(tmp_path, wire):
    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    folder = workspace(tmp_path / "elelem")
    site = tmp_path / "elelem_policy.json"
    site.write_text(json.dumps(site_policy(wire)))
    jupyter_path = str(prefix / "share" / "jupyter")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", jupyter_path)
        with kernel("elelem", folder, site, jupyter_path) as kc:
            exercise(kc, wire, folder, site, "/", "")


def test_a_malformed_policy_stops_both_fronts_naming_the_file(tmp_path, wire):
    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    site = tmp_path / "elelem_policy.json"
    site.write_text('{"tools": {"deny": "bash"}}')
    problem = f"site policy {site}: tools.deny must be a list of strings"
    jupyter_path = str(prefix / "share" / "jupyter")
    with kernel("python3", workspace(tmp_path / "magic"), site) as kc:
        run(kc, "%load_ext elelem_kernel")
        assert problem in said(kc, "%%elelem\nhi")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", jupyter_path)
        with kernel("elelem", workspace(tmp_path / "elelem"), site, jupyter_path) as kc:
            assert problem in said(kc, "hi")
    assert wire.requests == []
