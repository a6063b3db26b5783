"""The site policy on the command line (`ask`, `chat`, `review`, `mcp`, `policy`), as real
processes: what the administrator's `elelem_policy.json` allows, the person cannot loosen."""

from __future__ import annotations

import json
import stat

import pytest

from tests.git import git
from tests.test_cli import MARKER_PLUGIN, cli, folder  # noqa: F401  (runner and folder)
from tests.wire_servers import Round, WireServer

WORDS = "Ask it-help@example.com for more."


@pytest.fixture
def wire():
    with WireServer() as server:
        yield server


def write_policy(path, **policy):
    path.write_text(json.dumps({"message": WORDS, **policy}))
    return path


@pytest.fixture
def site(tmp_path):
    """The policy file's path (written by each test) and the environment naming it."""
    path = tmp_path / "site" / "elelem_policy.json"
    path.parent.mkdir()
    return path


def run(site, wire, folder, *args, env=None, input=""):  # noqa: F811
    base = {"ELELEM_POLICY": str(site), "OPENAI_API_KEY": "test-key"}
    return cli(*args, cwd=folder, input=input, env={**base, **(env or {})})


def committed(folder):  # noqa: F811
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "sheep")


def source(site):
    return f"the site policy ({site}, set by your administrator)"


def test_policy_shows_what_is_in_force_and_from_which_file(site, wire, folder):  # noqa: F811
    r = cli("policy", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert (
        "No site policy is in force" in r.stdout and "/etc/jupyter/elelem_policy.json" in r.stdout
    )
    write_policy(site, tools={"deny": ["bash"]}, budget={"day": "20"})
    r = run(site, wire, folder, "policy")
    assert r.returncode == 0, r.stderr
    assert str(site) in r.stdout and '`tools`: `{"deny": ["bash"]}`' in r.stdout
    assert '`budget`: `{"day": "20"}`' in r.stdout
    r = run(site, wire, folder, "chat", "-p", "demo", input="/policy\n")
    assert r.returncode == 0, r.stderr
    assert str(site) in r.stdout and '"deny": ["bash"]' in r.stdout


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"tools": {"deny": ["bash"]', "invalid JSON at line 1 column 28"),
        ('{"tool": {"deny": ["bash"]}}', "unknown key 'tool'"),
        ('{"tools": {"deny": "bash"}}', "tools.deny must be a list of strings"),
        ('{"modes": {"allow": ["careful"]}}', "modes.allow: 'careful' matches no mode"),
        ('{"budget": {"day": "lots"}}', "budget.day: bad budget 'lots'"),
        ('{"mcp": {"project_files": "no"}}', "mcp.project_files must be true or false"),
        ("[]", "it must be a JSON object"),
    ],
)
def test_a_malformed_policy_stops_elelem_naming_the_file(site, wire, folder, text, problem):  # noqa: F811
    site.write_text(text)
    committed(folder)
    for args in (["policy"], ["ask", "-p", "openai", "hi"], ["review", "-p", "demo"]):
        r = run(site, wire, folder, *args, env=wire.env("openai"))
        assert r.returncode == (2 if args[0] == "review" else 1), (args, r.stdout, r.stderr)
        assert f"site policy {site}: {problem}" in r.stderr, r.stderr
        assert "elelem will not run until the administrator fixes it" in r.stderr
    assert wire.requests == []


def test_a_missing_named_policy_is_an_error_not_no_policy(tmp_path, wire, folder):  # noqa: F811
    r = run(tmp_path / "nowhere.json", wire, folder, "ask", "-p", "demo", "hi")
    assert r.returncode == 1
    assert f"site policy {tmp_path / 'nowhere.json'}: cannot read it" in r.stderr


def test_the_policys_defaults_pick_the_gateway_provider_model_and_options(site, wire, folder):  # noqa: F811
    write_policy(
        site,
        default={"provider": "openai", "model": "gpt-4.1", "base_url": wire.base_url("openai")},
        options={"open*": {"max_tokens": 1000}},
    )
    wire.script("openai", Round(text="Hello from the gateway."))
    r = run(site, wire, folder, "ask", "hi")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Hello from the gateway."
    [request] = wire.requests
    assert request.body["model"] == "gpt-4.1" and request.body["max_tokens"] == 1000


def test_a_blocked_provider_or_model_is_refused_in_the_policys_words(site, wire, folder):  # noqa: F811
    write_policy(
        site,
        providers={"allow": ["openai", "demo"]},
        models={"allow": ["gpt-4.1*", "demo"], "block": ["*-preview"]},
    )
    env = wire.env("openai")
    r = run(site, wire, folder, "ask", "-p", "anthropic", "hi", env=env)
    assert r.returncode == 1
    assert (
        f'Error: provider "anthropic" is not allowed by {source(site)}; it allows providers: '
        f"openai, demo. {WORDS}"
    ) in r.stderr
    r = run(site, wire, folder, "ask", "hi", env={**env, "ELELEM_PROVIDER": "echo"})
    assert r.returncode == 1 and 'provider "echo" is not allowed' in r.stderr
    r = run(site, wire, folder, "ask", "-p", "openai", "--model", "gpt-4.1-preview", "hi", env=env)
    assert r.returncode == 1
    assert (
        f'model "gpt-4.1-preview" is not allowed by {source(site)}; it allows no models '
        f"matching *-preview. {WORDS}"
    ) in r.stderr
    r = run(site, wire, folder, "ask", "-p", "openai", "hi", env={**env, "ELELEM_MODEL": "o3"})
    assert r.returncode == 1 and 'model "o3" is not allowed' in r.stderr
    committed(folder)
    r = run(site, wire, folder, "review", "-p", "echo", env=env)
    assert r.returncode == 2 and 'provider "echo" is not allowed' in r.stderr
    r = run(site, wire, folder, "chat", "-p", "demo", input="/model gpt-4.1-preview\n/model\n")
    assert f'model "gpt-4.1-preview" is not allowed by {source(site)}' in r.stdout, r.stdout
    assert "demo" in r.stdout.splitlines()[-1] or "demo" in r.stdout
    assert wire.requests == []


def test_fixed_options_cannot_be_set_otherwise(site, wire, folder):  # noqa: F811
    write_policy(site, options={"openai": {"max_tokens": 1000}})
    env = {**wire.env("openai"), "ELELEM_MODEL": "gpt-4.1"}
    r = run(site, wire, folder, "ask", "-p", "openai", "-o", "max_tokens=5000", "hi", env=env)
    assert r.returncode == 1
    assert f"max_tokens=5000 for openai is not allowed by {source(site)}" in r.stderr
    assert "it allows max_tokens=1000" in r.stderr
    r = run(
        site,
        wire,
        folder,
        "ask",
        "-p",
        "openai",
        "hi",
        env={**env, "ELELEM_OPTIONS": "max_tokens=9"},
    )
    assert r.returncode == 1 and "max_tokens=9 for openai is not allowed" in r.stderr
    wire.script("openai", Round(text="ok"))
    r = run(site, wire, folder, "ask", "-p", "openai", "-o", "max_tokens=1000", "hi", env=env)
    assert r.returncode == 0, r.stderr
    assert [q.body["max_tokens"] for q in wire.requests] == [1000]


def test_a_mode_the_policy_does_not_allow_is_refused(site, wire, folder):  # noqa: F811
    write_policy(site, modes={"allow": ["plan", "build"]})
    r = run(site, wire, folder, "ask", "-p", "demo", "--mode", "auto", "hi")
    assert r.returncode == 1
    assert f"mode auto is not allowed by {source(site)}; it allows plan, build." in r.stderr
    r = run(site, wire, folder, "ask", "-p", "demo", "hi", env={"ELELEM_MODE": "verify"})
    assert r.returncode == 1 and "mode verify is not allowed" in r.stderr
    r = run(site, wire, folder, "chat", "-p", "demo", input="/mode auto\n/mode plan\n")
    assert "mode auto is not allowed" in r.stdout and "plan" in r.stdout
    write_policy(site, modes={"allow": ["plan"]})
    r = run(site, wire, folder, "chat", "-p", "demo", input="/mode\n")
    assert r.returncode == 0 and "plan" in r.stdout, r.stdout  # the default follows the policy
    write_policy(site, modes={"allow": ["build"]})
    committed(folder)
    r = run(site, wire, folder, "review", "-p", "demo")  # a review runs in plan: read-only
    assert r.returncode in (0, 1) and "is not allowed" not in r.stderr, r.stderr


def tool_results(stdout):
    events = [json.loads(line) for line in stdout.splitlines()]
    return [e for e in events if e["type"] == "block_start" and e["block"] == "tool_result"]


def test_a_denied_tool_is_never_offered_nor_run(site, wire, folder):  # noqa: F811
    write_policy(site, tools={"deny": ["bash", "mcp__*"]})
    wire.script(
        "openai",
        Round(calls=[("bash", {"command": "touch ran"})]),
        Round(text="Done."),
    )
    env = {**wire.env("openai"), "ELELEM_MODEL": "gpt-4.1"}
    args = ("ask", "--json", "-p", "openai", "--mode", "auto", "--allow", "bash", "go")
    r = run(site, wire, folder, *args, env=env)
    assert r.returncode == 0, r.stderr
    offered = [t["function"]["name"] for t in wire.requests[0].body["tools"]]
    assert "bash" not in offered and "read" in offered
    [result] = tool_results(r.stdout)
    assert result["ok"] is False
    assert f'tool "bash" is not allowed by {source(site)}' in json.loads(result["content"])["error"]
    assert not (folder / "ran").exists()


def test_a_tool_the_policy_asks_for_is_asked_even_when_allowed(site, wire, folder):  # noqa: F811
    wire.script(
        "openai",
        Round(calls=[("write", {"path": "a.txt", "content": "x"})]),
        Round(text="Done."),
        Round(calls=[("write", {"path": "a.txt", "content": "x"})]),
        Round(text="Done."),
    )
    env = {**wire.env("openai"), "ELELEM_MODEL": "gpt-4.1"}
    args = ("ask", "--json", "-p", "openai", "--allow", "write", "go")
    write_policy(site, tools={"ask": ["write"]})
    r = run(site, wire, folder, *args, env=env)
    [result] = tool_results(r.stdout)
    assert result["ok"] is False
    assert f"{source(site)} asks before every write call" in json.loads(result["content"])["error"]
    assert not (folder / "a.txt").exists()
    write_policy(site, tools={"ask": ["edit"]})  # the same run, the tool not named: it runs
    r = run(site, wire, folder, *args, env=env)
    [result] = tool_results(r.stdout)
    assert result["ok"] is True and (folder / "a.txt").read_text() == "x"


def test_the_day_budget_counts_every_session_and_cannot_be_raised(site, wire, folder):  # noqa: F811
    write_policy(site, budget={"day": "111k tokens", "session": "300k tokens"})
    env = {**wire.env("openai"), "ELELEM_MODEL": "gpt-4.1"}
    usage = {"input": 100_000, "output": 10_000}
    wire.script("openai", Round(text="One.", usage=usage), Round(text="Two.", usage=usage))
    args = ("ask", "-p", "openai", "-o", "max_tokens=1000")
    r = run(site, wire, folder, *args, "hi", env=env)
    assert r.returncode == 0 and r.stdout.strip() == "One.", r.stderr
    r = run(site, wire, folder, *args, "again", env=env)  # another session, the same day
    assert r.returncode == 3, r.stderr
    assert "budget: today spent 110k tokens of 111k tokens" in r.stderr
    assert f"This limit (111k tokens per day) is set by {source(site)}." in r.stderr
    assert len(wire.requests) == 1
    spent = folder / ".local" / "share" / "elelem-kernel" / "spent-today.json"
    assert json.loads(spent.read_text())["tokens"] == 110_000
    assert stat.S_IMODE(spent.stat().st_mode) == 0o600
    r = run(site, wire, folder, *args, "--budget", "off", "hi", env=env)
    assert r.returncode == 3 and "today spent 110k tokens" in r.stderr  # off lifts only yours
    r = run(site, wire, folder, *args, "--budget", "400k tokens", "hi", env=env)
    assert r.returncode == 1
    assert (
        f"a budget of 400k tokens per session is more than {source(site)} allows (300k tokens)"
    ) in r.stderr
    r = run(site, wire, folder, *args, "--budget", "500 tokens", "hi", env=env)
    assert r.returncode == 3 and "this session spent 0 tokens of 500 tokens" in r.stderr
    assert len(wire.requests) == 1


def test_the_session_budget_stops_a_chat(site, wire, folder):  # noqa: F811
    write_policy(site, budget={"session": "111k tokens"})
    env = {**wire.env("openai"), "ELELEM_MODEL": "gpt-4.1"}
    usage = {"input": 100_000, "output": 10_000}
    wire.script("openai", Round(text="One.", usage=usage), Round(text="Two.", usage=usage))
    r = run(
        site,
        wire,
        folder,
        "chat",
        "-p",
        "openai",
        "-o",
        "max_tokens=1000",
        env=env,
        input="hi\nagain\n/budget\n",
    )
    assert "budget: this session spent 110k tokens of 111k tokens" in r.stdout + r.stderr
    assert f"per session: **111k tokens**, spent 110k tokens, set by {source(site)}" in r.stdout
    assert len(wire.requests) == 1


def test_mcp_servers_the_policy_does_not_allow_are_skipped(site, wire, folder):  # noqa: F811
    agents = folder / ".agents"
    agents.mkdir()
    servers = {
        "mcpServers": {
            "notes": {"command": "python3", "args": ["-c", "pass"]},
            "web": {"command": "npx", "args": ["-y", "some-server"]},
        }
    }
    (agents / "mcp.json").write_text(json.dumps(servers))
    git(folder, "init", "-q")
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": "python3"}}}))
    assert cli("trust", cwd=folder).returncode == 0
    write_policy(site, mcp={"allow": ["notes", "python3"], "project_files": False})
    r = run(site, wire, folder, "mcp", "--no-start")
    lines = {line.split()[0].strip("*`:"): line for line in r.stdout.splitlines() if line.strip()}
    assert f'MCP server "web" is not allowed by {source(site)}' in r.stdout, r.stdout
    assert f"project MCP configs (.mcp.json) are turned off by {source(site)}" in r.stdout
    assert "not allowed" not in lines.get("notes", "")


def test_project_plugins_stay_off_when_the_policy_says_so(site, wire, tmp_path):  # noqa: F811
    repo = tmp_path / "repo"
    plugin = repo / ".agents" / "plugins" / "mark.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(MARKER_PLUGIN)
    marker = tmp_path / "marker"
    env = {"HOME": str(tmp_path / "home"), "MARKER": str(marker)}
    assert cli("trust", str(repo), cwd=repo, env=env).returncode == 0
    write_policy(site, plugins={"project": False})
    r = run(site, wire, repo, "ask", "-p", "demo", "hi", env=env)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    assert f"project plugins are turned off by {source(site)}" in r.stderr
    write_policy(site, plugins={"project": True})
    r = run(site, wire, repo, "ask", "-p", "demo", "hi", env=env)
    assert r.returncode == 0 and marker.read_text() == "loaded\n", r.stderr
