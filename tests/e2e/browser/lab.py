"""A throwaway Jupyter world for end-to-end tests: temp dirs, kernelspecs, JupyterLab.

`jupyter_env(base)` makes a private HOME, Jupyter config/data/runtime dirs, IPYTHONDIR and
JupyterLab settings under `base`, installs the Elelem kernelspec there, and returns the
environment to run kernels or a server in; `extension_env` adds the JupyterLab extension
built from this tree. `LabServer` runs `jupyter lab` in it on 127.0.0.1 with a token, on a
free port, and knows the URLs and REST calls tests need. `write_turns` writes the notebook
of an elelem conversation, `answer` scripts the wire server's model and `said` tells what
the model was last sent.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.ports import free_port
from tests.wire_servers import Round, reply

REPO = Path(__file__).resolve().parents[3]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "test-artifacts"
EXTENSION = REPO / "elelem_kernel" / "labextension"  # built by scripts/build_labextension.sh
NO_AUTOSAVE = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False}}
DROPPED = ("ANTHROPIC_", "OPENAI_", "OLLAMA_", "ELELEM_", "JPY_")  # the outer world's settings
SETTINGS = {
    # no toasts asking about news or updates over the screenshots, and no network
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {"theme": "JupyterLab Light"},
}


def jupyter_env(base: Path, **extra: str) -> dict[str, str]:
    """Environment of a private Jupyter installation under `base`, with the Elelem kernel."""
    dirs = {
        "HOME": base / "home",
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_DATA_DIR": base / "data",
        # short: the kernels' IPC sockets are named after their connection files here,
        # and a Unix socket's path must stay under 108 bytes (tests/kernel_transport.py)
        "JUPYTER_RUNTIME_DIR": Path(tempfile.mkdtemp(prefix="jrt-")),
        "IPYTHONDIR": base / "ipython",
        "JUPYTERLAB_SETTINGS_DIR": base / "settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "workspaces",
        "JUPYTER_PATH": base / "prefix" / "share" / "jupyter",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED)}
    env.update({k: str(v) for k, v in dirs.items()})
    env.update(
        {
            "ELELEM_PROVIDER": "demo",
            "ELELEM_DEMO_DELAY": "0",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra)
    write_settings(env, SETTINGS)
    install_elelem_kernel(base / "prefix", env)
    return env


def write_settings(env: dict[str, str], settings: dict[str, dict]) -> None:
    """Write JupyterLab user settings (file name: values) into env's settings dir."""
    for name, value in settings.items():
        target = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(value))


def extension_env(base: Path, wire: Any, *, enabled: bool) -> dict[str, str]:
    """`jupyter_env` with the extension built from this tree installed (a link, as
    scripts/build_labextension.sh makes), enabled or disabled, the model on `wire`, and
    autosave off, so a notebook's turns reach the file only when the test saves it.

    Whether the page then has the extension's plugins, or not, is for the test to check
    in the browser (`Lab.has_plugin`): `jupyter labextension list` would say so too, but
    costs six CPU-seconds a call (it asks yarn for its config) in a CPU-bound suite."""
    if not (EXTENSION / "package.json").is_file():
        pytest.skip("the JupyterLab extension is not built: bash scripts/build_labextension.sh")
    env = jupyter_env(base, ELELEM_DEMO_DELAY="0", **wire.env("openai"))
    link = Path(env["JUPYTER_PATH"]) / "labextensions" / "elelem-kernel"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(EXTENSION, target_is_directory=True)
    write_settings(env, NO_AUTOSAVE)
    if not enabled:
        labextension(env, "disable", "--level=user", "elelem-kernel")
    return env


def labextension(env: dict[str, str], *args: str) -> str:
    """`jupyter labextension ARGS` in `env`; what it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout + done.stderr


def install_elelem_kernel(prefix: Path, env: dict[str, str]) -> Path:
    """`elelem-kernel install --prefix PREFIX`, run as the user would; the kernelspec dir."""
    subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "install", "--prefix", str(prefix)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    spec = prefix / "share" / "jupyter" / "kernels" / "elelem"
    if not (spec / "kernel.json").is_file():
        raise RuntimeError(f"elelem-kernel install --prefix {prefix} wrote no {spec}/kernel.json")
    return spec


def copy_notebooks(root: Path) -> Path:
    """A copy of notebooks/ (no checkpoints) under `root`, outside any git repository."""
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return root


KERNELS = {
    "python3": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
    "elelem": {"name": "elelem", "display_name": "Elelem", "language": "elelem"},
}


def write_notebook(path: Path, sources: list[str], kernel: str = "python3") -> str:
    """Write a notebook of code cells; its name relative to the server root."""
    metadata = {"kernelspec": KERNELS[kernel], "language_info": {"name": "python"}}
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in sources], metadata=metadata), path)
    return path.name


def write_turns(path: Path, prompts: list[str], *more: str) -> str:
    """A notebook that loads elelem, then one `%%elelem -p openai` cell per prompt, then
    the cells in `more`; its name relative to the server root."""
    cells = [f"%%elelem -p openai\n{prompt}" for prompt in prompts]
    return write_notebook(path, ["%load_ext elelem_kernel", *cells, *more])


def scripted_turns(wire: Any, path: Path, exchanges: list[tuple[str, str]], *more: str) -> str:
    """A notebook of one prompt cell per (prompt, reply) exchange (then the cells in `more`),
    with the wire server queued to give those replies in turn; its name (`write_turns`)."""
    answer(wire, *(reply for _, reply in exchanges))
    return write_turns(path, [prompt for prompt, _ in exchanges], *more)


def answer(wire: Any, *texts: str) -> None:
    """Forget the wire server's past requests and queue one plain reply per text."""
    wire.requests.clear()
    wire.queue(*(reply("openai", Round(text=text)) for text in texts))


def said(wire: Any) -> list[tuple[str, str]]:
    """(role, content) of every message in the model's last request."""
    return [(m["role"], str(m.get("content"))) for m in wire.requests[-1].body["messages"]]


class LabServer:
    """`jupyter lab` on 127.0.0.1 with a token, serving `root`, in environment `env`."""

    def __init__(self, root: Path, env: dict[str, str], log: Path):
        self.root = root
        self.env = env
        self.log = log
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        argv = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            # another process may take the port first: the server tries the next ones and
            # says which it bound in its jpserver-PID.json (`start` reads it)
            "--ServerApp.port_retries=50",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.expose_app_in_browser=True",
            "--ServerApp.open_browser=False",
            # kernels over IPC sockets: no TCP port another test can take between
            # jupyter_client choosing it and the kernel binding it (tests/kernel_transport.py)
            "--KernelManager.transport=ipc",
            # jupyter-lsp looks for language servers with `npm prefix -g` at start: a
            # second of CPU a server, and there are none to find here
            "--LanguageServerManager.autodetect=False",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            argv.append("--allow-root")
        return argv

    def start(self, timeout: float = 180) -> LabServer:
        """Start the server and return once its API answers (stopping it when it does not:
        a loaded 2-core machine, with parallel workers, can take over a minute)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = self.log.open("wb")
        self.process = subprocess.Popen(
            self.command(), env=self.env, cwd=self.root, stdout=out, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited: see {self.log}")
            port = self.bound_port()
            try:
                if port is None:
                    raise OSError("not bound yet")
                self.port = port
                self.api("GET", "/api/status")
                return self
            except OSError:
                time.sleep(0.2)  # polling a starting server, not waiting on a page
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {timeout} s: see {self.log}")

    def bound_port(self) -> int | None:
        """The port the running server bound, from the jpserver-PID.json it writes in its
        runtime dir once it listens; None before then."""
        assert self.process is not None
        info = Path(self.env["JUPYTER_RUNTIME_DIR"]) / f"jpserver-{self.process.pid}.json"
        try:
            return int(json.loads(info.read_text())["port"])
        except (OSError, ValueError, KeyError):
            return None

    def stop(self) -> None:
        stop_process(self.process)

    def api(self, method: str, path: str, body: dict | None = None) -> object:
        """One REST call to the server; the parsed JSON answer (None when empty)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
        return json.loads(raw) if raw else None

    def lab_url(self, notebook: str, workspace: str) -> str:
        """The page showing `notebook` in its own JupyterLab workspace."""
        return f"{self.url}/lab/workspaces/{workspace}/tree/{notebook}?token={self.token}"

    def shutdown_kernels(self) -> None:
        """Stop every kernel the server runs (between tests, to spare the machine)."""
        for session in self.api("GET", "/api/sessions") or []:
            self.api("DELETE", f"/api/sessions/{session['id']}")


class NotebookServer(LabServer):
    """Notebook 7 (`jupyter notebook`) instead of JupyterLab, in the same private world."""

    def command(self) -> list[str]:
        argv = super().command()
        argv[argv.index("jupyterlab")] = "notebook"
        argv[argv.index("--LabApp.expose_app_in_browser=True")] = (
            "--JupyterNotebookApp.expose_app_in_browser=True"
        )
        return argv

    def lab_url(self, notebook: str, workspace: str) -> str:
        return f"{self.url}/notebooks/{notebook}?token={self.token}"


def stop_process(process: subprocess.Popen | None) -> None:
    """Terminate a server process and wait for it; kill it when it does not go in 15 s."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
