"""Plugins, provider resolution and the default provider."""

from __future__ import annotations

import pytest

from elelem_kernel.agent import factory, registry
from elelem_kernel.errors import ConfigError


@pytest.fixture
def clean_config(monkeypatch):
    config = registry.Config()
    monkeypatch.setattr(registry, "CONFIG", config)
    monkeypatch.setattr(registry, "_plugins_loaded", set())
    monkeypatch.setattr(registry, "_builtins_loaded", False)
    return config


def test_unknown_provider_lists_the_available_ones(clean_config):
    with pytest.raises(ConfigError) as e:
        registry.create_provider("nope")
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
    session = factory.new_session(provider="echo2", model="hey", workspace=tmp_path)
    assert session.toolbox.get("hello") is not None
    import asyncio

    assert asyncio.run(session.turn("x")).reply == "hey!"


def test_registering_a_name_twice_replaces_the_first(clean_config):
    registry.load_plugins([])
    registry.CONFIG.provider("demo", lambda model=None, **o: "mine")
    assert registry.create_provider("demo") == "mine"


def test_default_provider_order(clean_config, monkeypatch):
    for var in ("ELELEM_PROVIDER", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens on the discard port
    name, why = registry.default_provider()
    assert name == "demo" and "ANTHROPIC_API_KEY" in why
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert registry.default_provider()[0] == "openai"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-y")
    assert registry.default_provider()[0] == "anthropic"
    monkeypatch.setenv("ELELEM_PROVIDER", "echo")
    assert registry.default_provider() == ("echo", "chosen by ELELEM_PROVIDER")


def test_workspace_is_the_git_root(tmp_path):
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert factory.find_workspace(inner) == tmp_path.resolve()
    assert factory.find_workspace(tmp_path / "a") == tmp_path.resolve()
