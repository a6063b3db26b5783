"""The registry: providers and setups, configured by plugins.

    import elelem_kernel

    @elelem_kernel.configure
    def plugin(config):
        config.provider("echo2", lambda model=None, **options: Echo(prefix=model))
        config.setup("hello", add_hello_tool)   # add_hello_tool(session)

Built-in providers and the workspace tools register through the same calls. Sessions are
built from the registry by `agent/factory.py`. Plugin files
are every `*.py` directly in `~/.agents/plugins/`, then `./.agents/plugins/`, loaded once;
a file that fails is skipped with a warning naming it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .builtins import register as register_builtins

if TYPE_CHECKING:
    from .session import Session

ProviderFactory = Callable[..., Any]
Setup = Callable[["Session"], None]


class Config:
    """What plugins configure: provider factories and session setups, by name."""

    def __init__(self) -> None:
        self.providers: dict[str, ProviderFactory] = {}
        self.setups: dict[str, Setup] = {}
        self.default_checks: list[tuple[str, Callable[[], bool], str]] = []

    def provider(self, name: str, factory: ProviderFactory) -> None:
        """Register `factory(model=None, **options)` as provider `name` (replacing any)."""
        self.providers[name] = factory

    def setup(self, name: str, fn: Setup) -> None:
        """Run `fn(session)` for every new session (replacing a setup of the same name)."""
        self.setups[name] = fn

    def default_candidate(self, name: str, check: Callable[[], bool], why: str) -> None:
        """Offer provider `name` as the default when `check()` is true (first one wins)."""
        self.default_checks.append((name, check, why))


CONFIG = Config()
_plugins_loaded: set[Path] = set()
_builtins_loaded = False


def configure(fn: Callable[[Config], Any]) -> Callable[[Config], Any]:
    """Decorator for plugins: call `fn(config)` now with the global configuration."""
    fn(CONFIG)
    return fn


def plugin_folders() -> list[Path]:
    return [Path.home() / ".agents" / "plugins", Path.cwd() / ".agents" / "plugins"]


def load_plugins(folders: list[Path] | None = None) -> list[str]:
    """Load built-ins, then plugin files not loaded yet; returns warnings for failures."""
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        register_builtins(CONFIG)
    problems = []
    for folder in folders if folders is not None else plugin_folders():
        try:
            files = sorted(folder.glob("*.py")) if folder.is_dir() else []
        except OSError:
            continue
        for path in files:
            path = path.resolve()
            if path in _plugins_loaded:
                continue
            _plugins_loaded.add(path)
            try:
                _load_file(path)
            except Exception as e:
                message = f"elelem: skipped plugin {path}: {type(e).__name__}: {e}"
                problems.append(message)
                warnings.warn(message, stacklevel=2)
    return problems


def _load_file(path: Path) -> None:
    name = f"elelem_plugin_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group="elelem_kernel.providers")}


def provider_names() -> list[str]:
    """Every provider that `-p NAME` can resolve."""
    load_plugins()
    return sorted(set(CONFIG.providers) | set(_entry_points()))


def create_provider(name: str, model: str | None = None, **options: Any) -> Any:
    """A new provider `name`: plugins first, then the entry point group, else ConfigError."""
    load_plugins()
    factory = CONFIG.providers.get(name)
    if factory is None:
        ep = _entry_points().get(name)
        if ep is None:
            available = ", ".join(provider_names())
            raise ConfigError(f'unknown provider: "{name}". Available: {available}')
        factory = ep.load()
    return factory(model=model, **options)


def default_provider() -> tuple[str, str]:
    """The provider to use when none is named, and why it was chosen."""
    load_plugins()
    named = os.environ.get("ELELEM_PROVIDER")
    if named:
        return named, "chosen by ELELEM_PROVIDER"
    for name, check, why in CONFIG.default_checks:
        try:
            if check():
                return name, why
        except Exception:
            continue
    return "demo", (
        "no model is configured, so this is the offline demo model. Set ANTHROPIC_API_KEY "
        "or OPENAI_API_KEY, start Ollama, or pick one with -p NAME"
    )
