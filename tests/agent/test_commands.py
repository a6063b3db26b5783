"""Slash commands."""

from __future__ import annotations

import asyncio

from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.assembly.bundled import catalog
from tests.scripted import Scripted, say


def session(tmp_path, *rounds):
    box = Toolbox()
    box.add("read", "Read a file", {"path": {"type": "string"}})(lambda a: {})
    box.add("bash", "Run a command", {"command": {"type": "string"}}, kind="execute")(lambda a: {})
    return Session(
        Scripted(*rounds), box, workspace=tmp_path, provider_name="echo", providers=catalog()
    )


def test_help_lists_every_command(tmp_path):
    s = session(tmp_path)
    text = s.command("/help")
    for name in (
        "help",
        "provider",
        "model",
        "mode",
        "tools",
        "clear",
        "context",
        "usage",
        "history",
        "forget",
    ):
        assert f"`/{name}" in text


def test_help_is_a_markdown_table(tmp_path):
    from elelem_kernel.render.markdown import to_html

    assert "<table" in to_html(session(tmp_path).command("/help"))


def test_unknown_command_lists_the_commands(tmp_path):
    text = session(tmp_path).command("/frobnicate now")
    assert text.startswith("Unknown command `/frobnicate`") and "/help" in text


def test_mode_and_tools(tmp_path):
    s = session(tmp_path)
    assert "bash" not in s.command("/tools")
    assert "verify" in s.command("/mode verify")
    assert "bash" in s.command("/tools")
    assert "unknown mode" in s.command("/mode turbo") and s.mode == "verify"


def test_provider_switch_keeps_the_conversation(tmp_path):
    s = session(tmp_path, say("hi"))
    asyncio.run(s.turn("hello"))
    assert "echo" in s.command("/provider echo")
    assert len(s.conversation) == 1
    assert asyncio.run(s.turn("again")).reply == "again"
    assert "unknown provider" in s.command("/provider nope")


def test_clear_history_forget_context_usage(tmp_path):
    s = session(tmp_path, say("one"), say("two"), say("three"))
    asyncio.run(s.turn("first question"))
    asyncio.run(s.turn("second question"))
    assert "first question" in s.command("/history")
    assert "left out" in s.command("/forget 1")
    assert "no turn 9" in s.command("/forget 9")
    context = s.command("/context")
    assert "second question" in context and "first question" not in context and "~tokens" in context
    assert "2 turns" in s.command("/usage")
    old = s.conversation.id
    s.command("/clear")
    assert s.conversation.id != old and len(s.conversation) == 0
    assert f"Using conversation {old}" in s.command(f"/use {old}")


def test_completion(tmp_path):
    s = session(tmp_path)
    assert s.commands.complete(s, "/mo") == ["/mode", "/model"]
    assert s.commands.complete(s, "/mode v") == ["/mode verify"]
    assert "/provider demo" in s.commands.complete(s, "/provider d")


def test_save_writes_markdown(tmp_path):
    s = session(tmp_path, say("the answer"))
    asyncio.run(s.turn("the question"))
    s.command("/save talk.md")
    text = (tmp_path / "talk.md").read_text()
    assert "the question" in text and "the answer" in text


def test_trust_lists_the_files_loads_the_plugins_and_lists_and_revokes(tmp_path, monkeypatch):
    from elelem_kernel.agent import registry

    monkeypatch.setattr(registry, "CONFIG", registry.Config())
    monkeypatch.setattr(registry, "_builtins_loaded", False)
    for name, value in (("_plugins_loaded", set()), ("_skipped", {}), ("_told", set())):
        monkeypatch.setattr(registry, name, value)
    monkeypatch.setattr(registry, "_notify", lambda line: None)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "repo"
    (project / ".agents" / "plugins").mkdir(parents=True)
    (project / ".agents" / "plugins" / "hello.py").write_text(
        "import elelem_kernel\n"
        "def add(session):\n"
        "    session.toolbox.add('hello', 'say hello')(lambda args: {'hello': 1})\n"
        "@elelem_kernel.configure\n"
        "def plugin(config):\n"
        "    config.provider('hi', lambda model=None, **o: 'hi')\n"
        "    config.setup('hello', add)\n"
    )
    monkeypatch.chdir(project)
    s = session(project)
    assert "hi" not in s.facts.provider_names()
    assert "No folder is trusted yet" in s.command("/trust --list")

    text = s.command("/trust")
    assert f"Trusted {project.resolve()}" in text and "- `.agents/plugins/hello.py`" in text
    assert "New providers: `hi`." in text
    assert s.toolbox.get("hello") is not None and "hi" in s.facts.provider_names()
    assert f"- {project.resolve()}: trusted, 1 project file" in s.command("/trust --list")

    (project / ".agents" / "plugins" / "hello.py").write_text("# changed\n")
    assert "changed since it was trusted" in s.command("/trust --list")
    assert "Revoked the trust of" in s.command("/trust --revoke")
    assert "was not trusted" in s.command("/trust --revoke")
    assert "Usage: `/trust [DIR]" in s.command(f"/trust {tmp_path / 'missing'}")
    assert "Usage:" in s.command("/trust --list extra")


def test_tools_shows_a_globs_stars_as_typed(tmp_path):
    from elelem_kernel.render.markdown import to_html

    s = session(tmp_path)
    s.toolbox.add("find", "Match files with a glob like '*.py' or 'src/**/*.ipynb' | more")(
        lambda a: {}
    )
    shown = to_html(s.command("/tools"))
    assert "'*.py' or 'src/**/*.ipynb' | more" in shown and "<em>" not in shown


def test_counts_of_one_are_singular(tmp_path):
    s = session(tmp_path, say("hi"))
    asyncio.run(s.turn("hello"))
    assert s.command("/usage").startswith("1 turn,")
    assert "(1 turn)" in s.command(f"/use {s.conversation.id}")
