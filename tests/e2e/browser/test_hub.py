"""elelem on a real JupyterHub, driven in Chromium: two people, one site policy.

The hub (PyPI `jupyterhub`, its proxy from `.cache/hub-npm`, scripts/setup.sh installs
both) runs on loopback with the dummy authenticator and the local process spawner, each
person with their own home, temporary folder and model key; the administrator's policy
reaches every single-user server through the spawner's environment (`ELELEM_POLICY`), as
a ConfigMap at /etc/jupyter would on Kubernetes. The model is the module's loopback wire
server. One hub for the module, the session's one browser.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.browser.lab import SETTINGS, install_elelem_kernel, write_notebook, write_settings
from tests.e2e.browser.pages import BUSY_WAIT, Lab
from tests.ports import free_port
from tests.wire_servers import Round, WireServer

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[3]
PROXY = ROOT / ".cache" / "hub-npm" / "node_modules" / ".bin" / "configurable-http-proxy"
BIN = Path(sys.executable).parent
WORDS = "Ask the hub's administrator."
USAGE = {"input": 100_000, "output": 10_000}

CONFIG = """
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{base}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{base}/cookie_secret"
c.JupyterHub.pid_file = "{base}/hub.pid"
c.JupyterHub.cleanup_servers = True
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = "pw"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{base}/homes/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
# the page exposes `window.jupyterapp`: pages.py waits on the session's connected kernel
c.Spawner.args = ["--ServerApp.allow_root=True", "--LabApp.expose_app_in_browser=True"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {{
    **{env!r},
    "OPENAI_API_KEY": lambda spawner: "key-" + spawner.user.name,
    "TMPDIR": lambda spawner: "{base}/homes/" + spawner.user.name + "/tmp",
}}
"""


def site_policy(wire: WireServer) -> dict:
    return {
        "providers": {"allow": ["openai"]},
        "models": {"allow": ["gpt-4.1*"], "block": ["*-preview"]},
        "default": {"provider": "openai", "model": "gpt-4.1", "base_url": wire.base_url("openai")},
        "options": {"openai": {"max_tokens": 1000, "context_window": 1_000_000}},
        "tools": {"deny": ["bash"]},
        "mcp": {"allow": ["time"]},
        "budget": {"day": "111k tokens"},
        "message": WORDS,
    }


class Hub:
    """The running hub: its URL, folders and process."""

    def __init__(self, base: Path, port: int, process: subprocess.Popen):
        self.base, self.port, self.process = base, port, process
        self.url = f"http://127.0.0.1:{port}"

    def home(self, user: str) -> Path:
        return self.base / "homes" / user

    def person(self, user: str) -> PersonServer:
        return PersonServer(self, user)


class PersonServer:
    """A person's single-user server, as `Lab` addresses notebooks on a server."""

    def __init__(self, hub: Hub, user: str):
        self.hub, self.user = hub, user

    def lab_url(self, notebook: str, workspace: str) -> str:
        return f"{self.hub.url}/user/{self.user}/lab/workspaces/{workspace}/tree/{notebook}"


def prepare_home(home: Path, notebooks: dict[str, tuple[list[str], str]]) -> None:
    """A person's home before the first login: lab settings, notebooks, their MCP servers."""
    (home / "tmp").mkdir(parents=True)
    write_settings({"JUPYTERLAB_SETTINGS_DIR": str(home / ".jupyter/lab/user-settings")}, SETTINGS)
    for name, (cells, kernel) in notebooks.items():
        write_notebook(home / name, cells, kernel)
    servers = {"time": {"command": str(BIN / "mcp-server-time")}, "web": {"command": "npx"}}
    (home / ".agents").mkdir()
    (home / ".agents" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def wait_for(url: str, process: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the hub exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the hub did not answer {url}:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def hub_wire():
    with WireServer() as server:
        yield server


@pytest.fixture(scope="module")
def hub(chromium, hub_wire, shots, tmp_path_factory):
    """JupyterHub with alice and bob, the policy in the spawner's environment."""
    missing = None
    if not PROXY.exists() or shutil.which("node") is None:
        missing = f"the hub test needs node and {PROXY} (scripts/setup.sh test: npm ci)"
    elif importlib.util.find_spec("jupyterhub") is None:
        missing = "the hub test needs jupyterhub: `pip install -e .[test]`"
    if missing and (os.environ.get("ELELEM_REQUIRE_BROWSER") or os.environ.get("CI")):
        pytest.fail(f"{missing} (required here: CI or ELELEM_REQUIRE_BROWSER is set)")
    if missing:
        pytest.skip(missing)
    base = tmp_path_factory.mktemp("hub")
    site = base / "etc" / "elelem_policy.json"
    site.parent.mkdir()
    site.write_text(json.dumps(site_policy(hub_wire)))
    prefix = base / "prefix"
    install_elelem_kernel(prefix, dict(os.environ))
    env = {
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "JUPYTER_PATH": str(prefix / "share" / "jupyter"),
        "ELELEM_POLICY": str(site),
        "PYTHONUNBUFFERED": "1",
    }
    prepare_home(
        base / "homes" / "alice",
        {
            "magic.ipynb": (
                [
                    "%load_ext elelem_kernel",
                    "%%elelem\nWhat time is it?",
                    "%%elelem --model gpt-4.1-preview\nAnd with the preview model?",
                ],
                "python3",
            ),
            "kernel.ipynb": (["Summarise the week.", "And the month?"], "elelem"),
        },
    )
    prepare_home(
        base / "homes" / "bob",
        {
            "bob.ipynb": (
                ["%load_ext elelem_kernel", "%elelem /history", "%%elelem\nHello?"],
                "python3",
            )
        },
    )
    port = free_port()
    config = CONFIG.format(
        port=port,
        hub_port=free_port(),
        api_port=free_port(),
        proxy=str(PROXY),
        base=base,
        singleuser=str(BIN / "jupyterhub-singleuser"),
        env=env,
    )
    (base / "jupyterhub_config.py").write_text(config)
    log = shots / "jupyterhub.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(BIN / "jupyterhub"), "-f", str(base / "jupyterhub_config.py")],
            cwd=base,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PATH": env["PATH"]},
            start_new_session=True,
        )
    running = Hub(base, port, process)
    try:
        wait_for(f"{running.url}/hub/health", process, log)
        yield running
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def log_in(browser, hub: Hub, user: str, shots: Path) -> Lab:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", "pw")
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/lab**", timeout=BUSY_WAIT)
    return Lab(page, hub.person(user), shots)


def modes_of(root: Path) -> dict[str, int]:
    """Every file and folder under `root` with its permission bits."""
    found = {str(root): stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        found[str(path)] = stat.S_IMODE(path.lstat().st_mode)
    return found


def private(root: Path) -> dict[str, str]:
    """What under `root` others could read: {path: mode} of every group/other bit."""
    return {p: oct(m) for p, m in modes_of(root).items() if m & 0o077}


def output_text(cell) -> str:
    return cell.locator(".jp-OutputArea").inner_text()


def test_two_people_on_a_hub_under_one_policy(browser, hub, hub_wire, shots):
    wire = hub_wire
    source = "the site policy ("
    # alice: a %%elelem turn; bash is not offered, the MCP server the policy allows starts
    wire.script(
        "openai",
        Round(calls=[("bash", {"command": "date"})]),
        Round(text="It is noon, alice."),
        Round(text="A busy week.", usage=USAGE),
    )
    alice = log_in(browser, hub, "alice", shots)
    alice.open("magic.ipynb", "alice")
    alice.run("%load_ext elelem_kernel")
    turn = alice.turn("What time is it?")
    assert "It is noon, alice." in output_text(turn)
    refused = alice.run("preview model")
    refused.locator(".jp-OutputArea-output").first.wait_for()
    words = output_text(refused)
    assert 'model "gpt-4.1-preview" is not allowed by the site policy' in words, words
    assert WORDS in words
    alice.shot("hub-alice-magic")
    first = wire.requests[0]
    offered = [t["function"]["name"] for t in first.body["tools"]]
    assert "bash" not in offered and any(n.startswith("mcp__time__") for n in offered)
    assert first.body["model"] == "gpt-4.1" and first.body["max_tokens"] == 1000
    assert first.headers["authorization"] == "Bearer key-alice"
    assert "is not allowed by the site policy" in json.dumps(wire.requests[1].body["messages"])

    # alice's Elelem-kernel notebook: one big turn, then the day's budget stops the next
    alice = Lab(alice.page.context.new_page(), hub.person("alice"), shots)
    alice.open("kernel.ipynb", "alice-kernel")
    alice.turn("Summarise the week.")
    stopped = alice.turn("And the month?")
    words = output_text(stopped)
    assert "today spent 110k tokens of 111k tokens" in words, words
    assert "per day) is set by " + source in words
    assert "could not compact" not in words  # the policy's fixed context_window is the session's
    alice.shot("hub-alice-kernel-budget")
    assert len(wire.requests) == 3

    home = hub.home("alice")
    data = home / ".local" / "share" / "elelem-kernel"
    assert json.loads((data / "spent-today.json").read_text())["tokens"] > 110_000
    mcp_logs = list((home / "tmp").glob("elelem-mcp-*"))
    assert mcp_logs, sorted(str(p) for p in home.rglob("*"))[:50]
    for root in (data, home / ".cache" / "elelem-kernel", *mcp_logs):
        assert root.exists(), root
        assert private(root) == {}, f"others could read these under {root}"

    # bob: his own key, his own day, none of alice's conversation
    wire.script("openai", Round(text="Hello, bob."))
    bob = log_in(browser, hub, "bob", shots)
    bob.open("bob.ipynb", "bob")
    bob.run("%load_ext elelem_kernel")
    history = output_text(bob.run("/history"))
    assert "What time is it" not in history and "Summarise" not in history
    turn = bob.turn("Hello?")
    assert "Hello, bob." in output_text(turn)
    assert wire.requests[-1].headers["authorization"] == "Bearer key-bob"
    bob.shot("hub-bob-notebook")
    bob = Lab(bob.page.context.new_page(), hub.person("bob"), shots)
    bob.page.goto(f"{hub.url}/user/bob/lab/workspaces/bob-files")
    bob.page.locator(".jp-DirListing-item").first.wait_for()
    listed = bob.page.locator(".jp-DirListing-itemText").all_inner_texts()
    assert "bob.ipynb" in listed and "magic.ipynb" not in listed and "kernel.ipynb" not in listed
    bob.shot("hub-bob-files")
    bob_spent = json.loads(
        (hub.home("bob") / ".local/share/elelem-kernel/spent-today.json").read_text()
    )
    assert bob_spent["tokens"] < 1_000
    assert not (hub.home("bob") / ".cache" / "elelem-kernel" / "mcp-tools").exists() or all(
        "alice" not in p.read_text() for p in (hub.home("bob") / ".cache").rglob("*") if p.is_file()
    )

    # the hub stops cleanly, its proxy and both people's servers with it
    import psutil

    children = psutil.Process(hub.process.pid).children(recursive=True)
    assert len(children) >= 3, children  # the proxy and two single-user servers
    alice.page.context.close()
    bob.page.context.close()
    hub.process.send_signal(signal.SIGTERM)
    assert hub.process.wait(timeout=60) == 0
    gone, alive = psutil.wait_procs(children, timeout=30)
    assert alive == [], alive
