"""MCP servers no one here wrote, run for real: stdio and streamable HTTP, through turns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elelem_kernel.agent.front import TurnSettings
from elelem_kernel.assembly.sessions import new_session
from tests.mcp import servers
from tests.mcp.servers import write_config
from tests.ports import free_port
from tests.scripted import Scripted, call, say


def session(ws: Path, *rounds, mode: str = "plan"):
    s = new_session("echo", workspace=ws, mode=mode)
    s.facts.provider = Scripted(*rounds)
    return s


def calls(result) -> list[dict]:
    return [c for r in result.record["rounds"] for c in r["calls"]]


def offered(s) -> set[str]:
    return {t["function"]["name"] for t in s.provider.sent[0]["tools"]}


def test_stdio_time_server_in_a_turn(home, ws):
    write_config(
        home / ".agents" / "mcp.json",
        {"time": {"command": servers.python_server("mcp-server-time")}},
    )
    s = session(ws, call("mcp__time__get_current_time", {"timezone": "UTC"}), say("done"))
    result = s.run("what time is it?")
    assert result.stop == "end_turn", result.error
    [record] = calls(result)
    assert record["ok"], record
    assert json.loads(record["result"])["structured"]["timezone"] == "UTC"
    spec = next(t for t in s.provider.sent[0]["tools"] if t["function"]["name"] == record["name"])
    assert "timezone" in spec["function"]["parameters"]["properties"]
    assert "$schema" not in spec["function"]["parameters"]
    answer = s.command("/mcp")
    assert "**time** (stdio)" in answer and "`mcp__time__get_current_time` (read)" in answer


def test_kinds_follow_annotations_across_modes_and_headless_approval(home, ws, monkeypatch):
    root = ws / "shared"
    root.mkdir()
    monkeypatch.setenv("MCP_TEST_ROOT", str(root))
    write_config(
        home / ".agents" / "mcp.json",
        {"fs": {"command": servers.filesystem(), "args": ["${MCP_TEST_ROOT:-/nowhere}"]}},
    )
    plan = session(
        ws, call("mcp__fs__write_file", {"path": str(root / "a.txt"), "content": "x"}), say("ok")
    )
    result = plan.run("write it")
    names = offered(plan)
    assert "mcp__fs__read_text_file" in names and "mcp__fs__list_directory" in names
    assert not {"mcp__fs__write_file", "mcp__fs__create_directory"} & names
    assert "not available in plan mode" in calls(result)[0]["result"]

    build = session(
        ws, call("mcp__fs__create_directory", {"path": str(root / "made")}), say("ok"), mode="build"
    )
    result = build.run("make a folder")
    names = offered(build)
    assert "mcp__fs__create_directory" in names and "mcp__fs__write_file" not in names
    [record] = calls(result)
    assert not record["ok"] and "approval is needed" in record["result"]
    assert not (root / "made").exists()

    verify = session(ws, say("ok"), mode="verify")
    verify.run("look")
    names = offered(verify)
    assert "mcp__fs__write_file" in names and "mcp__fs__create_directory" not in names

    auto = session(
        ws,
        call("mcp__fs__write_file", {"path": str(root / "a.txt"), "content": "hello"}),
        say("ok"),
        mode="auto",
    )
    result = auto.run("write it")
    assert calls(result)[0]["ok"], calls(result)
    assert (root / "a.txt").read_text() == "hello"


def test_approval_preview_names_server_tool_and_arguments(home, ws):
    root = ws / "shared"
    root.mkdir()
    write_config(
        home / ".agents" / "mcp.json",
        {"fs": {"command": servers.filesystem(), "args": [str(root)]}},
    )
    seen = []

    class Approver:
        def approve(self, request):
            seen.append(request)
            return "allow"

    s = session(
        ws, call("mcp__fs__create_directory", {"path": str(root / "made")}), say("ok"), mode="build"
    )
    result = s.run("make it", settings=TurnSettings(Approver()))
    assert calls(result)[0]["ok"]
    assert (root / "made").is_dir()
    [request] = seen
    assert request.kind == "write"
    assert "MCP server fs, tool create_directory" in request.preview
    assert str(root / "made") in request.preview


def serve_everything(tmp_path: Path, transport: str):
    """server-everything over `transport` on a free loopback port; (url base, process)."""
    command = servers.everything()
    port = free_port()
    log_path = tmp_path / f"everything-{transport}.log"
    log = open(log_path, "w")
    process = subprocess.Popen(
        [command, transport],
        env={**os.environ, "PORT": str(port)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    deadline = time.monotonic() + 20
    while "port" not in log_path.read_text().lower():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(log_path.read_text())
        time.sleep(0.1)
    return f"http://127.0.0.1:{port}", process


@pytest.fixture
def everything_http(tmp_path):
    base, process = serve_everything(tmp_path, "streamableHttp")
    yield f"{base}/mcp"
    process.terminate()
    process.wait(10)


@pytest.fixture
def everything_sse(tmp_path):
    base, process = serve_everything(tmp_path, "sse")
    yield f"{base}/sse"
    process.terminate()
    process.wait(10)


def test_the_older_sse_transport(home, ws, everything_sse):
    write_config(home / ".agents" / "mcp.json", {"old": {"type": "sse", "url": everything_sse}})
    s = session(ws, call("mcp__old__echo", {"message": "over sse"}), say("done"))
    result = s.run("echo")
    [record] = calls(result)
    assert record["ok"] and "over sse" in record["result"], record


def test_streamable_http_with_image_and_structured_results(home, ws, everything_http):
    write_config(
        home / ".agents" / "mcp.json",
        {
            "every": {
                "type": "http",
                "url": everything_http,
                "headers": {"X-Api-Key": "sekrit-header-value"},
            }
        },
    )
    s = session(
        ws,
        call("mcp__every__get-sum", {"a": 2, "b": 3}, id="c1"),
        call("mcp__every__get-tiny-image", {}, id="c2"),
        call("mcp__every__get-structured-content", {"location": "Chicago"}, id="c3"),
        say("done"),
    )
    result = s.run("add and show")
    summed, image, structured = calls(result)
    assert summed["ok"] and "5" in json.loads(summed["result"])["content"]
    media = json.loads(image["result"])["media"]
    assert media[0]["type"] == "image" and media[0]["mime_type"] == "image/png"
    assert "temperature" in json.loads(structured["result"])["structured"]
    listing = s.command("/mcp")
    assert "**every** (http)" in listing and "X-Api-Key" in listing
    assert "sekrit-header-value" not in listing + json.dumps(result.record)


def test_a_missing_command_is_reported_once_and_other_servers_work(home, ws):
    write_config(
        home / ".agents" / "mcp.json",
        {
            "ghost": {"command": str(ws / "no-such-server")},
            "lost": {"command": "sh", "cwd": "no-such-folder"},
            "time": {"command": servers.python_server("mcp-server-time")},
        },
    )
    s = session(ws, call("mcp__time__get_current_time", {"timezone": "UTC"}), say("a"), say("b"))
    first = s.run("one")
    assert any("'ghost'" in n and "command not found" in n for n in first.notices)
    assert any("'lost'" in n and "(cwd) does not exist" in n for n in first.notices)
    assert first.record["notices"] == first.notices
    assert calls(first)[0]["ok"]
    second = s.run("two")
    assert second.notices == []
    assert "failed: command not found" in s.command("/mcp")


def test_secrets_in_env_never_reach_records_or_mcp_output(home, ws):
    write_config(
        home / ".agents" / "mcp.json",
        {
            "every": {
                "command": servers.everything(),
                "env": {"PLAIN_SETTING": "visible-but-secret-1"},
            }
        },
    )
    s = session(ws, call("mcp__every__get-env", {}), say("done"))
    result = s.run("env?")
    [record] = calls(result)
    assert record["ok"] and "PLAIN_SETTING" in record["result"]
    text = json.dumps(result.record) + s.command("/mcp") + json.dumps(s.provider.sent)
    assert "visible-but-secret-1" not in text


def test_a_crash_mid_call_fails_the_call_and_the_next_turn_restarts(home, ws):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("crash")})
    s = session(
        ws,
        call("mcp__flaky__boom", {}),
        say("it broke"),
        call("mcp__flaky__ping", {}),
        say("back"),
        mode="auto",
    )
    first = s.run("crash it")
    [record] = calls(first)
    assert not record["ok"]
    assert "crashed" in record["result"] and "about to crash" in record["result"]
    assert first.stop == "end_turn"
    second = s.run("again")
    assert second.notices == []
    assert calls(second)[0]["ok"] and "pong" in calls(second)[0]["result"]


def test_a_slow_call_hits_its_timeout(home, ws):
    write_config(home / ".agents" / "mcp.json", {"slow": {**servers.flaky("slow"), "timeout": 0.5}})
    s = session(ws, call("mcp__slow__wait", {"seconds": 30}), say("gave up"), mode="auto")
    result = s.run("wait")
    [record] = calls(result)
    assert not record["ok"] and "within 0.5 s" in record["result"]
    assert "running" in s.command("/mcp")


def test_a_server_that_never_initializes_is_reported_with_its_stderr(home, ws, fresh_hub):
    fresh_hub.init_timeout = 1.5
    script = "echo hanging on purpose >&2; exec sleep 600"
    write_config(
        home / ".agents" / "mcp.json", {"stuck": {"command": "sh", "args": ["-c", script]}}
    )
    s = session(ws, say("fine"))
    result = s.run("hello")
    [notice] = result.notices
    assert "'stuck' failed: no answer to initialize within 1.5 s" in notice
    assert "hanging on purpose" in notice
    assert result.reply == "fine"


def test_list_changed_refreshes_the_tools_at_the_next_turn(home, ws):
    write_config(home / ".agents" / "mcp.json", {"flaky": servers.flaky("slow")})
    s = session(
        ws,
        call("mcp__flaky__grow"),
        say("grown"),
        call("mcp__flaky__fresh"),
        say("ok"),
        mode="auto",
    )
    s.run("grow")
    assert "mcp__flaky__fresh" not in offered(s)
    second = s.run("use it")
    assert "mcp__flaky__fresh" in {t["function"]["name"] for t in s.provider.sent[-1]["tools"]}
    assert "fresh and new" in calls(second)[0]["result"]


def test_a_config_without_the_sdk_names_the_extra(home, ws):
    write_config(home / ".agents" / "mcp.json", {"time": {"command": "mcp-server-time"}})
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from elelem_kernel.assembly.sessions import new_session\n"
        f"s = new_session('echo', workspace={str(ws)!r})\n"
        "r = s.run('hi')\n"
        "print(r.notices)\n"
    )
    env = {**os.environ, "HOME": str(home)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "pip install 'elelem-kernel[mcp]'" in out.stdout


@pytest.mark.parametrize("vision", [True, False])
def test_an_image_shows_in_the_card_and_reaches_a_model_that_takes_images(home, ws, vision):
    from elelem_kernel.render import static

    write_config(home / ".agents" / "mcp.json", {"every": {"command": servers.everything()}})
    s = session(ws, call("mcp__every__get-tiny-image", {}), say("a logo"))
    s.provider.takes_images = lambda: vision
    events = []
    result = s.run("show me", events.append)
    [record] = calls(result)
    assert record["ok"]
    [image] = record["images"]
    assert image["mime_type"] == "image/png" and len(image["data"]) > 1000
    sent = s.provider.sent[1]["messages"][-1]
    assert sent["role"] == "tool" and image["data"] not in sent["content"]
    assert "image 1: " in sent["content"] and "PNG" in sent["content"]
    if vision:
        assert sent["images"] == [image]
    else:
        assert "images" not in sent and "the model takes no images" in sent["content"]
    shown = [e for e in events if e.get("block") == "tool_result"]
    assert shown[0]["images"] == [image]
    html = static.html(result.record)
    assert f'<img src="data:image/png;base64,{image["data"]}"' in html


def test_git_server_read_tools_in_plan_and_a_write_declined_headless(home, ws):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a\n")
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    write_config(
        home / ".agents" / "mcp.json",
        {
            "git": {
                "command": servers.python_server("mcp-server-git"),
                "args": ["--repository", str(ws)],
            }
        },
    )
    plan = session(ws, call("mcp__git__git_log", {"repo_path": str(ws)}), say("ok"))
    result = plan.run("log")
    assert "first commit" in calls(result)[0]["result"]
    names = offered(plan)
    assert {"mcp__git__git_status", "mcp__git__git_log"} <= names
    assert not {"mcp__git__git_commit", "mcp__git__git_reset"} & names
    (ws / "b.txt").write_text("b\n")
    subprocess.run([*git, "add", "b.txt"], check=True)
    build = session(
        ws,
        call("mcp__git__git_commit", {"repo_path": str(ws), "message": "x"}),
        say("no"),
        mode="build",
    )
    result = build.run("commit")
    assert "mcp__git__git_reset" not in offered(build)
    assert "approval is needed" in calls(result)[0]["result"]
    log = subprocess.run([*git, "log", "--oneline"], capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1


def test_a_server_that_exits_at_once_is_reported_without_its_secrets(home, ws):
    script = 'echo "starting with token $API_TOKEN" >&2; exit 1'
    write_config(
        home / ".agents" / "mcp.json",
        {"leaky": {"command": "sh", "args": ["-c", script], "env": {"API_TOKEN": "tok-secret-42"}}},
    )
    s = session(ws, say("fine"))
    result = s.run("hi")
    [notice] = result.notices
    assert (
        "'leaky' failed: it closed the connection" in notice
        and "starting with token [redacted]" in notice
    )
    assert "tok-secret-42" not in json.dumps(result.record) + s.command("/mcp")


def test_a_secret_as_a_dict_key_is_redacted_everywhere(home, ws):
    entry = {**servers.flaky("crash"), "env": {"API_TOKEN": "tok-secret-4242-key"}}
    write_config(home / ".agents" / "mcp.json", {"flaky": entry})
    s = session(ws, call("mcp__flaky__keyed", {}), say("done"), mode="auto")
    result = s.run("give me the keyed result")
    [record] = calls(result)
    assert record["ok"] and "the value" in record["result"]
    seen = json.dumps(result.record) + json.dumps(s.provider.sent)
    assert "tok-secret-4242-key" not in seen and "[redacted]" in record["result"]
