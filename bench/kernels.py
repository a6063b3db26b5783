"""Real kernels through jupyter_client: isolated dirs, kernelspecs, timed cells, RSS."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from queue import Empty
from typing import Any

from bench.common import clean_env


class Kernels:
    """Kernelspecs (python3, elelem, extra pythons) and state dirs under one temp folder."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.specs = self.root / "kernels"
        self.specs.mkdir(parents=True, exist_ok=True)
        self.add_python("python3", sys.executable)
        from elelem_kernel.jupyter.kernelspec import kernel_json

        (self.specs / "elelem").mkdir(exist_ok=True)
        (self.specs / "elelem" / "kernel.json").write_text(json.dumps(kernel_json()))

    def add_python(self, name: str, python: str) -> None:
        """A stock IPython kernelspec `name` running interpreter `python`."""
        folder = self.specs / name
        folder.mkdir(exist_ok=True)
        spec = {
            "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": name,
            "language": "python",
        }
        (folder / "kernel.json").write_text(json.dumps(spec))

    def env(self, **extra: str) -> dict[str, str]:
        """An environment whose Jupyter and IPython state stays under the temp folder."""
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        return clean_env(
            HOME=str(home),
            JUPYTER_CONFIG_DIR=str(self.root / "jupyter-config"),
            JUPYTER_DATA_DIR=str(self.root / "jupyter-data"),
            JUPYTER_RUNTIME_DIR=str(self.root / "jupyter-runtime"),
            IPYTHONDIR=str(self.root / "ipython"),
            OLLAMA_HOST="http://127.0.0.1:9",
            **extra,
        )

    def start(self, name: str, env: dict[str, str], cwd: Path | None = None) -> Kernel:
        """Start kernel `name` and wait until it answers; timed from launch to ready."""
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager

        ksm = KernelSpecManager(kernel_dirs=[str(self.specs)])
        km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 (kept open by the kernel)
        start = time.perf_counter()
        km.start_kernel(env=env, cwd=str(cwd or self.root), stdout=log, stderr=log)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
        except RuntimeError:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            raise
        return Kernel(km, kc, time.perf_counter() - start)


class Kernel:
    """A started kernel; `cell()` runs code and times every iopub message it caused."""

    def __init__(self, km: Any, kc: Any, ready: float):
        self.km = km
        self.kc = kc
        self.ready = ready

    def cell(self, code: str, cell_id: str | None = None, timeout: float = 120) -> Cell:
        """Run `code` until the kernel is idle again.

        With `cell_id` the request carries it in its metadata, as JupyterLab sends it (our
        fronts then show the live view); without, it looks like a headless runner's.
        """
        kc = self.kc
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        request = kc.session.msg("execute_request", content)
        if cell_id:
            request["metadata"]["cellId"] = cell_id
        msg_id = request["header"]["msg_id"]
        msgs: list[tuple[float, dict]] = []
        deadline = time.monotonic() + timeout
        start = time.perf_counter()
        kc.shell_channel.send(request)
        while True:
            try:
                msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except Empty:
                raise TimeoutError(f"the kernel was not idle {timeout} s after: {code}") from None
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            msgs.append((time.perf_counter(), msg))
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        end = time.perf_counter()
        while True:
            reply = kc.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                return Cell(start, end, reply, msgs)

    def rss(self) -> int:
        """The kernel process's resident memory, bytes."""
        pid = self.km.provisioner.process.pid
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Cell:
    """One executed cell: start and idle times, the reply, and (time, message) pairs."""

    def __init__(self, start: float, end: float, reply: dict, msgs: list[tuple[float, dict]]):
        self.start = start
        self.end = end
        self.reply = reply
        self.msgs = msgs

    @property
    def wall(self) -> float:
        return self.end - self.start

    @property
    def ok(self) -> bool:
        return self.reply["content"]["status"] == "ok" and not self.errors()

    def errors(self) -> list[str]:
        """Error outputs, and the reply's error, as text."""
        out = [
            f"{m['content']['ename']}: {m['content']['evalue']}"
            for _, m in self.msgs
            if m["msg_type"] == "error"
        ]
        content = self.reply["content"]
        if content["status"] != "ok" and not out:
            out.append(f"{content.get('ename')}: {content.get('evalue')}")
        return out

    def count(self) -> int:
        """iopub messages of this request, status and execute_input included."""
        return len(self.msgs)

    def kinds(self) -> str:
        """The message types and their counts, most frequent first: "comm_open 11, ..."."""
        counts = Counter(m["msg_type"] for _, m in self.msgs)
        return ", ".join(f"{kind} {n}" for kind, n in counts.most_common())

    def first(self, text: str) -> float | None:
        """When the first message whose content mentions `text` arrived."""
        for at, m in self.msgs:
            if text in json.dumps(m["content"]):
                return at
        return None
