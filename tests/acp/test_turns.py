"""ACP round 2: what third-party clients hit, driven through the Python SDK's client.

Unique tool call ids, the call before its permission, cancel then an immediate prompt,
open calls closed at cancel, sessions saved at session/new, rounds' texts apart, load
replayed as the live turn was, usage updates only for clients that know them; and the
security round's client-side items (literal `${VAR}`, bounded terminal output, private
session files).
"""

from __future__ import annotations

import asyncio
import json
import stat
import sys

import pytest

pytest.importorskip("acp")

from acp import text_block  # noqa: E402
from acp.schema import (  # noqa: E402
    EnvVariable,
    McpServerStdio,
    TerminalExitStatus,
    TerminalOutputResponse,
)

from tests.acp.test_agent import Recorder, agent, run, start  # noqa: E402
from tests.wire_servers import Round, WireServer  # noqa: E402


def calls(client: Recorder) -> list:
    return client.of("tool_call")


def test_tool_call_ids_are_unique_and_each_call_is_sent_before_its_permission(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(calls=[("write", {"path": "a.txt", "content": "a\n"}, "call_0")]),
            Round(text="Wrote a."),
            Round(calls=[("write", {"path": "b.txt", "content": "b\n"}, "call_0")]),
            Round(text="Wrote b."),
        )
        client = Recorder(answers=["allow", "allow"])

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws, usage=False)
                for text in ("write a", "write b"):
                    await conn.prompt(session_id=new.session_id, prompt=[text_block(text)])

        run(main())
    ids = [c.tool_call_id for c in calls(client)]
    assert len(ids) == 2 and len(set(ids)) == 2, ids
    for n, (kind, what) in enumerate(client.log):
        if kind == "ask":
            announced = [
                u.tool_call_id
                for k, u in client.log[:n]
                if k == "update" and u.session_update == "tool_call"
            ]
            assert what in announced, (what, announced)
    finals = [u for u in client.of("tool_call_update") if u.status == "completed"]
    assert {u.tool_call_id for u in finals} == set(ids)
    assert (ws / "a.txt").read_text() == "a\n" and (ws / "b.txt").read_text() == "b\n"
    assert client.of("usage_update") == []  # this client did not say it knows them


def test_the_demo_models_calls_are_unique_and_announced_before_their_permission(tmp_path, home, ws):
    client = Recorder(answers=["allow", "allow"])

    async def main():
        env = {**home, "ELELEM_PROVIDER": "demo", "ELELEM_DEMO_DELAY": "0"}
        async with agent(client, env, tmp_path) as conn:
            _, new = await start(conn, ws)
            for name in ("a.md", "b.md"):
                prompt = [text_block(f"write a file {name}")]
                await conn.prompt(session_id=new.session_id, prompt=prompt)

    run(main())
    ids = [c.tool_call_id for c in calls(client)]
    assert len(ids) == len(set(ids)) == 2, ids
    asked = [n for n, (kind, _) in enumerate(client.log) if kind == "ask"]
    assert len(asked) == 2
    for n in asked:
        announced = [
            u.tool_call_id
            for kind, u in client.log[:n]
            if kind == "update" and u.session_update == "tool_call"
        ]
        assert client.log[n][1] in announced, (client.log[n][1], announced)
    assert (ws / "a.md").is_file() and (ws / "b.md").is_file()


def test_the_demo_models_call_ids_differ_from_turn_to_turn():
    from elelem_kernel.providers.demo import DemoProvider

    tools = [{"function": {"name": n}} for n in ("list", "read")]
    seen = []
    for _ in range(2):
        events = []
        messages = [{"role": "user", "content": "what is here?"}]
        asyncio.run(DemoProvider(delay=0).fetch(messages, tools, events.append))
        seen += [e["id"] for e in events if e.get("type") == "doing"]
    assert len(seen) == len(set(seen)) == 4, seen


class SlowToKill(Recorder):
    """A client whose terminals run until killed, and whose kill takes a second."""

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        await asyncio.sleep(1.0)
        await super().kill_terminal(session_id, terminal_id, **kwargs)


def test_a_prompt_right_after_cancel_waits_and_open_calls_end_as_cancelled(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(calls=[("bash", {"command": "sleep 60"})]),
            Round(text="Next answer."),
        )
        client = SlowToKill()

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws, terminal=True)
                sid = new.session_id
                await conn.set_session_mode(session_id=sid, mode_id="auto")
                first = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
                while not client.terminals:
                    await asyncio.sleep(0.05)
                await conn.cancel(session_id=sid)
                second = await conn.prompt(session_id=sid, prompt=[text_block("next")])
                return await first, second

        first, second = run(main())
    assert first.stop_reason == "cancelled"
    assert second.stop_reason == "end_turn" and client.text().endswith("Next answer.")
    [bash] = calls(client)
    last = [u for u in client.of("tool_call_update") if u.tool_call_id == bash.tool_call_id][-1]
    assert last.status == "failed"


def test_a_session_is_saved_at_new_and_loads_in_another_process(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script("anthropic", Round(text="Hello from the second process."))
        env = {**home, **wire.env("anthropic")}
        first, second = Recorder(), Recorder()

        async def main():
            async with agent(first, env, tmp_path) as conn:
                _, new = await start(conn, ws)
            async with agent(second, env, tmp_path) as conn:
                await conn.initialize(protocol_version=1)
                listed = await conn.list_sessions()
                await conn.load_session(cwd=str(ws), session_id=new.session_id, mcp_servers=[])
                answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
                return new.session_id, listed, answer

        sid, listed, answer = run(main())
    assert [s.session_id for s in listed.sessions] == [sid]
    assert answer.stop_reason == "end_turn"
    assert second.text() == "Hello from the second process."


def test_rounds_texts_are_set_apart(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(text="Let me look.", calls=[("read", {"path": "notes.txt"})]),
            Round(text="It has three lines."),
        )
        client = Recorder()

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws)
                await conn.prompt(session_id=new.session_id, prompt=[text_block("look")])

        run(main())
    assert client.text() == "Let me look.\n\nIt has three lines."


def test_load_replays_the_turn_as_it_was_shown_live_with_its_mode(tmp_path, home, ws):
    note = "# Notes\n\nWritten by hand.\n"
    with WireServer() as wire:
        wire.script(
            "anthropic",
            Round(
                text="Writing.",
                calls=[
                    ("write", {"path": "notes.md", "content": note}),
                    ("edit", {"path": "notes.txt", "old": "two", "new": "TWO"}),
                ],
            ),
            Round(text="Done."),
        )
        env = {**home, **wire.env("anthropic")}
        live, loaded = Recorder(), Recorder()

        async def main():
            async with agent(live, env, tmp_path) as conn:
                _, new = await start(conn, ws)
                await conn.set_session_mode(session_id=new.session_id, mode_id="auto")
                await conn.prompt(session_id=new.session_id, prompt=[text_block("write")])
                await conn.set_session_mode(session_id=new.session_id, mode_id="verify")
            async with agent(loaded, env, tmp_path) as conn:
                await start(conn, ws)
                return await conn.load_session(
                    cwd=str(ws), session_id=new.session_id, mcp_servers=[]
                )

        answer = run(main())
    assert answer.modes.current_mode_id == "verify"
    shown, replayed = calls(live), calls(loaded)
    assert (
        [c.title for c in replayed]
        == [c.title for c in shown]
        == [
            "write notes.md",
            "edit notes.txt",
        ]
    )
    assert [c.locations[0].path for c in replayed] == [c.locations[0].path for c in shown]
    assert {c.tool_call_id for c in replayed}.isdisjoint(c.tool_call_id for c in shown)
    diffs = [
        u.content[0]
        for u in loaded.of("tool_call_update")
        if u.content and u.content[0].type == "diff"
    ]
    assert [(d.path, d.new_text) for d in diffs] == [
        (str(ws / "notes.md"), note),
        (str(ws / "notes.txt"), "TWO"),
    ]
    assert loaded.text() == live.text() == "Writing.\n\nDone."


def test_a_clients_mcp_servers_are_taken_literally(tmp_path, home, ws):
    seen = tmp_path / "seen.json"
    spy = tmp_path / "spy.py"
    spy.write_text(
        "import json, os, sys\n"
        "seen = {'argv': sys.argv[1:], 'env': os.environ.get('TOKEN')}\n"
        f"json.dump(seen, open({str(seen)!r}, 'w'))\n"
    )
    server = McpServerStdio(
        name="spy",
        command=sys.executable,
        args=[str(spy), "${SECRET}"],
        env=[EnvVariable(name="TOKEN", value="${SECRET}")],
    )
    with WireServer() as wire:
        wire.script("anthropic", Round(text="Hi."))
        client = Recorder()
        env = {**home, **wire.env("anthropic"), "SECRET": "the-agent-secret"}

        async def main():
            async with agent(client, env, tmp_path) as conn:
                _, new = await start(conn, ws, mcp_servers=[server])
                await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])

        run(main())
    got = json.loads(seen.read_text())
    assert got == {"argv": ["${SECRET}"], "env": "${SECRET}"}


class Flood(Recorder):
    """A client whose terminal returns 5 MB of output."""

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        await super().terminal_output(session_id, terminal_id, **kwargs)
        status = TerminalExitStatus(exit_code=0)
        return TerminalOutputResponse(output="x" * 5_000_000, truncated=False, exit_status=status)


def test_the_editors_terminal_output_is_bounded_like_the_bash_tools(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script(
            "anthropic", Round(calls=[("bash", {"command": "echo hi"})]), Round(text="Done.")
        )
        client = Flood()
        # a large known window: the result is bounded by the terminal's own cut, not by
        # what is left of an assumed 8k window (agent/fitting.py)
        env = {**home, **wire.env("anthropic"), "ELELEM_CONTEXT_WINDOW": "1000000"}

        async def main():
            async with agent(client, env, tmp_path) as conn:
                _, new = await start(conn, ws, terminal=True)
                await conn.set_session_mode(session_id=new.session_id, mode_id="auto")
                await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])

        run(main())
        sent = json.dumps(wire.requests[1].body)
    assert len(sent) < 200_000
    assert "cut from the middle" in sent and "the output was cut" in sent


def test_saved_sessions_are_private(tmp_path, home, ws):
    with WireServer() as wire:
        wire.script("anthropic", Round(text="A secret answer."))
        client = Recorder()

        async def main():
            async with agent(client, {**home, **wire.env("anthropic")}, tmp_path) as conn:
                _, new = await start(conn, ws)
                await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])

        run(main())
    folder = tmp_path / "sessions"
    [saved] = folder.glob("*.ipynb")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_a_plugin_packages_provider_is_offered_once_the_first_turn_has_answered(tmp_path, home, ws):
    """Finding plugin packages' providers scans every installed package: session/new offers
    the registered providers at once, and the others follow the first turn's answer."""
    site = tmp_path / "site"
    info = site / "elelem_fake_provider-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: elelem-fake-provider\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[elelem_kernel.providers]\nfake = fake_provider:make\n")
    path = ":".join(p for p in (home.get("PYTHONPATH"), str(site)) if p)
    env = {**home, "PYTHONPATH": path, "ELELEM_PROVIDER": "demo", "ELELEM_DEMO_DELAY": "0"}
    client = Recorder()

    async def main():
        async with agent(client, env, tmp_path) as conn:
            _, new = await start(conn, ws)
            await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
            for _ in range(200):
                if client.of("config_option_update"):
                    break
                await asyncio.sleep(0.05)
            return new

    new = run(main())
    offered = [o.value for o in new.config_options[1].options]
    assert "demo" in offered and "fake" not in offered
    [update] = client.of("config_option_update")
    provider = update.config_options[1]
    assert provider.id == "provider" and "fake" in [o.value for o in provider.options]
