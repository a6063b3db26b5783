"""Helpers for tests that drive a real kernel through jupyter_client."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from queue import Empty
from typing import Any

HERE = Path(__file__).parent


def workspace(root: Path) -> Path:
    """A kernel cwd holding the front test plugin (providers stream, slow, toucher, xss)."""
    plugins = root / ".agents" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "fronts_plugin.py", plugins / "fronts_plugin.py")
    return root


def trusted(env: dict[str, str], folder: Path) -> dict[str, str]:
    """`env`, with `folder` trusted in its HOME as `elelem-kernel trust` does, so the
    kernel loads the folder's plugins (untrusted project plugins are skipped)."""
    from unittest import mock

    from elelem_kernel.agent import trust

    with mock.patch.dict(os.environ, HOME=env["HOME"]):
        trust.trust(folder)
    return env


def isolated_env(root: Path, **extra: str) -> dict[str, str]:
    """The environment for a kernel whose Jupyter and IPython state lives under `root`."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for key in ("JPY_SESSION_NAME", "ELELEM_NOTEBOOK", "OPENAI_BASE_URL", "OLLAMA_HOST"):
        env.pop(key, None)
    state = root.parent / f"{root.name}-state"  # outside the workspace the agent sees
    env.update(
        HOME=str(state / "home"),
        JUPYTER_CONFIG_DIR=str(state / "jupyter" / "config"),
        JUPYTER_DATA_DIR=str(state / "jupyter" / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "jupyter" / "runtime"),
        IPYTHONDIR=str(state / "ipython"),
        XDG_CACHE_HOME=str(state / "cache"),  # MCP tool lists: this kernel's own
        ELELEM_PROVIDER="echo",
        OLLAMA_HOST="http://127.0.0.1:9",
    )
    env.update(extra)
    (state / "home").mkdir(parents=True, exist_ok=True)
    return env


def run(kc: Any, code: str, **kwargs: Any) -> tuple[dict, list[dict]]:
    """Execute `code`; its reply and every iopub message it caused."""
    msgs: list[dict] = []
    kwargs.setdefault("allow_stdin", False)
    reply = kc.execute_interactive(code, output_hook=msgs.append, timeout=60, **kwargs)
    return reply, msgs


def of(msgs: list[dict], *types: str) -> list[dict]:
    return [m for m in msgs if m["msg_type"] in types]


def frozen(msgs: list[dict]) -> dict:
    """The content of the (last) output carrying a turn record."""
    found = [
        m["content"]
        for m in of(msgs, "display_data", "update_display_data")
        if "elelem" in m["content"].get("metadata", {})
    ]
    assert found, [m["msg_type"] for m in msgs]
    return found[-1]


def texts(msgs: list[dict]) -> str:
    """Every text/plain and text/html of displays plus stream text, joined."""
    out = []
    for m in msgs:
        content = m["content"]
        data = content.get("data") or {}
        out += [str(data.get("text/plain", "")), str(data.get("text/html", ""))]
        out.append(str(content.get("text", "")))
        out.append(str(content.get("evalue", "")))
    return "\n".join(out)


def live(msgs: list[dict]) -> str:
    """The text a live view showed while the turn ran: its widgets' `value` states (the
    frozen output replaces them when the turn ends, so none of it is saved)."""
    out = []
    for m in of(msgs, "comm_open", "comm_msg"):
        state = (m["content"].get("data") or {}).get("state") or {}
        if isinstance(state.get("value"), str):
            out.append(state["value"])
    return "\n".join(out)


def collect(kc: Any, msg_id: str, until: Any, timeout: float = 30) -> list[dict]:
    """Read iopub messages of request `msg_id` until `until(msgs)` is true."""
    msgs: list[dict] = []
    deadline = time.monotonic() + timeout
    while not until(msgs):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; saw {[m['msg_type'] for m in msgs]}")
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except Empty:
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            msgs.append(msg)
    return msgs


def idle(msgs: list[dict]) -> bool:
    return any(
        m["msg_type"] == "status" and m["content"]["execution_state"] == "idle" for m in msgs
    )


def reply_to(kc: Any, msg_id: str, timeout: float = 30) -> dict:
    """The shell reply to request `msg_id` (earlier unread replies are skipped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_shell_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg
    raise AssertionError(f"no reply to {msg_id}")


def send_in_cell(
    kc: Any, code: str, cell: str = "cell-1", allow_stdin: bool = True, **metadata: Any
) -> str:
    """Send `code` as JupyterLab does (with the cell's id, and more, in the metadata, so
    widgets are shown); its msg id."""
    request = kc.session.msg(
        "execute_request",
        {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": allow_stdin,
            "stop_on_error": True,
        },
    )
    request["metadata"].update(cellId=cell, **metadata)
    kc.shell_channel.send(request)
    return request["header"]["msg_id"]


def run_in_cell(
    kc: Any, code: str, cell: str, allow_stdin: bool = False, **metadata: Any
) -> tuple[dict, list[dict]]:
    """Execute `code` as JupyterLab does and wait for it: its reply and iopub messages."""
    msg_id = send_in_cell(kc, code, cell, allow_stdin, **metadata)
    msgs = collect(kc, msg_id, idle, timeout=60)
    return reply_to(kc, msg_id), msgs


def opened(msgs: list[dict], test: Any) -> list[dict]:
    """The comm_opens among `msgs` whose widget state passes `test`."""
    return [
        m
        for m in msgs
        if m["msg_type"] == "comm_open" and test(m["content"]["data"].get("state") or {})
    ]


def allow_buttons(msgs: list[dict]) -> list[dict]:
    """The approval cards' Allow buttons opened among `msgs`."""
    return opened(msgs, lambda state: state.get("description") == "Allow")


def buttons_shown(msgs: list[dict]) -> bool:
    """The card's children hold the row of buttons: ready for a click."""
    allow = allow_buttons(msgs)
    rows = allow and opened(
        msgs,
        lambda state: f"IPY_MODEL_{allow[0]['content']['comm_id']}" in state.get("children", []),
    )
    return bool(rows) and any(
        f"IPY_MODEL_{rows[0]['content']['comm_id']}"
        in json.dumps(m["content"]["data"].get("state", {}))
        for m in of(msgs, "comm_msg")
    )
