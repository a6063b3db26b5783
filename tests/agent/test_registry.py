"""Plugins, provider resolution and the default provider."""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

import pytest

from elelem_kernel.agent import registry
from elelem_kernel.assembly import sessions
from elelem_kernel.assembly.bundled import catalog
from elelem_kernel.errors import ConfigError


@pytest.fixture
def clean_config(monkeypatch):
    config = registry.Config()
    monkeypatch.setattr(registry, "CONFIG", config)
    monkeypatch.setattr(registry, "_plugins_loaded", set())
    monkeypatch.setattr(registry, "_builtins_loaded", False)
    monkeypatch.setattr(registry, "_skipped", {})
    monkeypatch.setattr(registry, "_told", set())
    monkeypatch.setattr(registry, "_notify", None)
    return config


def test_unknown_provider_lists_the_available_ones(clean_config):
    with pytest.raises(ConfigError) as e:
        catalog().create_provider("nope")
    message = str(e.value)
    assert message.startswith('unknown provider: "nope". Available: ')
    assert "anthropic" in message and "demo" in message and "ollama" in message


def test_plugin_files_register_providers_and_setups_and_a_broken_file_is_skipped(
    clean_config, tmp_path
):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "a_good.py").write_text(
        "import elelem_kernel\n"
        "class Echo2:\n"
        "    def __init__(self, prefix): self.prefix = prefix; self.model = prefix\n"
        "    def fetch(self, messages, tools, emit):\n"
        "        emit({'type': 'saying', 'text': f'{self.prefix}!'})\n"
        "def hello(session):\n"
        "    session.toolbox.add('hello', 'say hello')(lambda args: {'hello': 'world'})\n"
        "@elelem_kernel.configure\n"
        "def plugin(config):\n"
        "    config.provider('echo2', lambda model=None, **options: Echo2(prefix=model))\n"
        "    config.setup('hello', hello)\n"
    )
    (folder / "b_broken.py").write_text("def oops(:\n")
    with pytest.warns(UserWarning, match=r"skipped plugin .*b_broken\.py: SyntaxError"):
        problems = registry.load_plugins([folder])
    assert len(problems) == 1
    assert registry.load_plugins([folder]) == []  # loaded once
    provider = registry.create_provider("echo2", model="hey")
    assert provider.model == "hey"
    session = sessions.new_session(provider="echo2", model="hey", workspace=tmp_path)
    assert session.toolbox.get("hello") is not None
    import asyncio

    assert asyncio.run(session.turn("x")).reply == "hey!"


def test_a_scan_on_another_thread_never_shows_a_half_loaded_plugin(clean_config, tmp_path):
    """The ACP agent lists every provider on a worker thread while a turn may look up its
    provider on the event loop: the lookup waits for a plugin being loaded, and each file
    runs once."""
    import threading
    import time

    folder = tmp_path / "plugins"
    folder.mkdir()
    runs = tmp_path / "runs"
    (folder / "slow.py").write_text(
        "import pathlib, time\n"
        "import elelem_kernel\n"
        f"pathlib.Path({str(runs)!r}).open('a').write('ran\\n')\n"
        "time.sleep(0.3)\n"
        "@elelem_kernel.configure\n"
        "def plugin(config):\n"
        "    config.provider('slowp', lambda model=None, **options: None)\n"
    )
    scanning = threading.Thread(target=registry.load_plugins, args=([folder],))
    scanning.start()
    while not runs.exists():  # the other thread is inside the plugin
        time.sleep(0.005)
    registry.load_plugins([folder])
    found = registry.CONFIG.providers.get("slowp")
    scanning.join(timeout=10)
    assert found is not None  # not the registry as it was before the plugin finished
    assert runs.read_text() == "ran\n"


def test_registering_a_name_twice_replaces_the_first(clean_config):
    registry.load_plugins([])
    registry.CONFIG.provider("demo", lambda model=None, **o: "mine")
    assert registry.create_provider("demo").inner == "mine"  # a plugin's, wrapped


def test_built_ins_load_beneath_plugins_whatever_loaded_first(clean_config, tmp_path):
    """A plugin loaded before the composition root registered the built-ins still wins
    over a built-in of the same name; the built-in setups still run first."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "mine.py").write_text(
        "import elelem_kernel\n"
        "@elelem_kernel.configure\n"
        "def plugin(config):\n"
        "    config.provider('demo', lambda model=None, **options: 'my demo')\n"
        "    config.setup('mine', lambda session: None)\n"
    )
    registry.load_plugins([folder])
    providers = catalog()
    assert providers.create_provider("demo").inner == "my demo"
    assert "anthropic" in providers.provider_names()
    assert list(registry.CONFIG.setups) == ["workspace", "mcp", "mine"]


def test_a_session_made_without_a_catalog_keeps_its_provider(tmp_path):
    from elelem_kernel.agent.session import Session
    from tests.scripted import Scripted

    session = Session(Scripted(), workspace=tmp_path, provider_name="scripted")
    assert session.facts.provider_names() == ["scripted"]
    with pytest.raises(ConfigError, match="made without a registry"):
        session.set_provider("echo")
    assert session.provider_name == "scripted"
    assert "made without a registry" in session.command("/provider echo")


def test_default_provider_order(clean_config, monkeypatch):
    for var in ("ELELEM_PROVIDER", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens on the discard port
    name, why = catalog().default_provider()
    assert name == "demo" and "ANTHROPIC_API_KEY" in why
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert catalog().default_provider()[0] == "openai"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-y")
    assert catalog().default_provider()[0] == "anthropic"
    monkeypatch.setenv("ELELEM_PROVIDER", "echo")
    assert catalog().default_provider() == ("echo", "chosen by ELELEM_PROVIDER")


def test_workspace_is_the_git_root(tmp_path):
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert sessions.find_workspace(inner) == tmp_path.resolve()
    assert sessions.find_workspace(tmp_path / "a") == tmp_path.resolve()


MARKER_PLUGIN = """\
import os
import elelem_kernel

open(os.environ["MARKER"], "a").write("loaded\\n")


@elelem_kernel.configure
def plugin(config):
    config.provider("marked", lambda model=None, **options: "marked")
"""


@pytest.fixture
def project(clean_config, tmp_path, monkeypatch):
    """A working folder holding a plugin that writes a marker when imported; HOME isolated."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MARKER", str(tmp_path / "marker"))
    folder = tmp_path / "repo"
    (folder / ".agents" / "plugins").mkdir(parents=True)
    (folder / ".agents" / "plugins" / "mark.py").write_text(MARKER_PLUGIN)
    monkeypatch.chdir(folder)
    return folder


def test_project_plugins_load_only_once_the_folder_is_trusted(project, tmp_path):
    from elelem_kernel.agent import trust

    told = []
    registry.set_notify(told.append)
    assert registry.load_plugins() == []
    assert not (tmp_path / "marker").exists()
    assert len(told) == 1
    assert "skipped 1 project plugin in" in told[0] and "(mark.py)" in told[0]
    assert f"elelem-kernel trust {project.resolve()}" in told[0]
    with pytest.raises(ConfigError, match="skipped 1 project plugin"):
        registry.create_provider("marked")  # the error says why the provider is missing
    assert len(told) == 1  # said once per process, however often plugins are looked at

    trust.trust(project)
    registry.load_plugins()
    assert (tmp_path / "marker").read_text() == "loaded\n"
    assert registry.create_provider("marked").inner == "marked"
    assert registry.skipped() == []


def test_a_plugin_changed_after_trust_is_skipped_and_says_so(project, tmp_path):
    from elelem_kernel.agent import trust

    trust.trust(project)
    (project / ".agents" / "plugins" / "mark.py").write_text(MARKER_PLUGIN + "# more\n")
    with pytest.warns(registry.UntrustedPluginsWarning, match="changed since the folder was"):
        registry.load_plugins()
    assert not (tmp_path / "marker").exists()


def test_the_persons_own_plugins_need_no_trust(clean_config, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MARKER", str(tmp_path / "marker"))
    (tmp_path / ".agents" / "plugins").mkdir(parents=True)
    (tmp_path / ".agents" / "plugins" / "mark.py").write_text(MARKER_PLUGIN)
    monkeypatch.chdir(tmp_path)  # the working folder is home: its plugins are the person's
    registry.set_notify(pytest.fail)
    registry.load_plugins()
    assert (tmp_path / "marker").exists()


def test_trusted_plugins_reach_a_running_session(project, tmp_path):
    from elelem_kernel.agent import trust

    (project / ".agents" / "plugins" / "tool.py").write_text(
        "import elelem_kernel\n"
        "def add(session):\n"
        "    session.toolbox.add('hello', 'say hello')(lambda args: {'hello': 1})\n"
        "@elelem_kernel.configure\n"
        "def plugin(config):\n"
        "    config.setup('hello', add)\n"
    )
    registry.set_notify(lambda line: None)
    session = sessions.new_session(provider="echo", workspace=project)
    assert session.toolbox.get("hello") is None
    trust.trust(project)
    lines = registry.load_trusted_plugins(session)
    assert session.toolbox.get("hello") is not None
    assert "New providers: `marked`." in lines and "Set up in this session: `hello`." in lines


def _compiled_elsewhere(plugin: Path, source: str) -> Path:
    """A real `.pyc` of `source` where the import system looks for `plugin`'s cache, marked
    unchecked-hash so an import loader runs it without comparing it with the `.py`."""
    other = plugin.parent.parent / "other.py"
    other.write_text(source)
    cached = Path(importlib.util.cache_from_source(str(plugin)))
    py_compile.compile(
        str(other),
        cfile=str(cached),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        doraise=True,
    )
    other.unlink()
    return cached


@pytest.mark.parametrize("who", ["project", "person"])
def test_a_plugin_runs_the_bytes_that_were_trusted_never_a_cached_pyc(
    who, project, tmp_path, monkeypatch
):
    from elelem_kernel.agent import trust

    folder = project if who == "project" else tmp_path / "home"
    plugins = folder / ".agents" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    plugin = plugins / "mark.py"
    plugin.write_text(MARKER_PLUGIN)
    evil = MARKER_PLUGIN.replace('write("loaded', 'write("from the pyc')
    cached = _compiled_elsewhere(plugin, evil)
    if who == "person":
        (project / ".agents" / "plugins" / "mark.py").unlink()
    trust.trust(project)
    assert trust.list_text().count(": trusted") == 1  # the .pyc is no project file
    registry.set_notify(pytest.fail)
    registry.load_plugins()
    assert cached.exists()
    assert (tmp_path / "marker").read_text() == "loaded\n"
    assert registry.create_provider("marked").inner == "marked"
