"""The registry: providers and setups, configured by plugins.

    import elelem_kernel

    @elelem_kernel.configure
    def plugin(config):
        config.provider("echo2", lambda model=None, **options: Echo(prefix=model))
        config.setup("hello", add_hello_tool)   # add_hello_tool(session)

Built-in providers and the workspace tools register through the same calls, by the
composition root (`assembly/bundled.py`, through `load_builtins`), which also builds
sessions from the registry (`assembly/sessions.py`). Plugin files
are every `*.py` directly in `~/.agents/plugins/`, then `./.agents/plugins/`, loaded once;
a file that fails is skipped with a warning naming it. The person's own folder is trusted;
the working folder's plugins came with the folder (a cloned repository, a pull request
under review), so they load only once the person trusted that folder (`agent/trust.py`);
until then they are skipped with one line saying how to trust them (`set_notify`).
Each plugin runs from the bytes read once for the trust check, compiled into a fresh
module: never a `__pycache__` file or anything else an import loader would prefer.
Loading is under one lock: a scan on a worker thread (the ACP agent's list of every
provider) and a turn's on the event loop load each file once.
"""

from __future__ import annotations

import os
import sys
import threading
import types
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel import options
from elelem_kernel.agent import context, media, policy, pricing, trust
from elelem_kernel.errors import ConfigError, UntrustedPluginsWarning
from elelem_kernel.events import Provider, as_provider

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: `factory(model=None, **options)`: any object with `fetch` (create_provider wraps one
#: that is not a `Provider`), so a factory returns `object` and the registry narrows it.
ProviderFactory = Callable[..., object]
#: `fn(session)`: what a plugin's setup does to each new `Session` (add tools, commands).
Setup = Callable[[Any], None]


class Config:
    """What plugins configure: provider factories and session setups, by name."""

    def __init__(self) -> None:
        self.providers: dict[str, ProviderFactory] = {}
        self.setups: dict[str, Setup] = {}
        self.about: dict[str, Callable[[], str]] = {}
        self.default_checks: list[tuple[str, Callable[[], bool], str]] = []

    def provider(self, name: str, factory: ProviderFactory) -> None:
        """Register `factory(model=None, **options)` as provider `name` (replacing any)."""
        self.providers[name] = factory

    def describe(self, name: str, about: Callable[[], str]) -> None:
        """Let `elelem-kernel providers` say `about()` after provider `name` (one line)."""
        self.about[name] = about

    def setup(self, name: str, fn: Setup) -> None:
        """Run `fn(session)` for every new session (replacing a setup of the same name)."""
        self.setups[name] = fn

    def default_candidate(self, name: str, check: Callable[[], bool], why: str) -> None:
        """Offer provider `name` as the default when `check()` is true (first one wins)."""
        self.default_checks.append((name, check, why))


CONFIG = Config()
_plugins_loaded: set[Path] = set()
_builtins_loaded = False
_loading = threading.RLock()  #: held while built-ins or plugin files load
#: project plugin folder -> the line saying why its plugins were skipped (while they are)
_skipped: dict[Path, str] = {}
#: lines already told: each is said once per process
_told: set[str] = set()
Notify = Callable[[str], None]
_notify: Notify | None = None


def configure(fn: Callable[[Config], Any]) -> Callable[[Config], Any]:
    """Decorator for plugins: call `fn(config)` now with the global configuration."""
    fn(CONFIG)
    return fn


def plugin_folders() -> list[Path]:
    """The person's plugin folder, then the working folder's (which needs trust)."""
    return [user_plugin_folder(), Path.cwd() / ".agents" / "plugins"]


def user_plugin_folder() -> Path:
    return Path.home() / ".agents" / "plugins"


def set_notify(fn: Notify | None) -> Notify | None:
    """Send the lines about skipped project plugins to `fn` (None: a Python warning);
    returns the previous receiver so a front can put it back."""
    global _notify
    previous, _notify = _notify, fn
    return previous


def skipped() -> list[str]:
    """The lines about project plugins skipped so far because their folder is not trusted."""
    return list(_skipped.values())


def load_builtins(register: Callable[[Config], None]) -> None:
    """Register what ships with the package (`register(config)`, once), beneath whatever
    plugins registered already: a plugin's provider or setup of the same name still wins,
    and the built-in setups and default candidates come first."""
    global _builtins_loaded
    with _loading:
        if _builtins_loaded:
            return
        _builtins_loaded = True
        builtin = Config()
        register(builtin)
        CONFIG.providers = {**builtin.providers, **CONFIG.providers}
        CONFIG.setups = {**builtin.setups, **CONFIG.setups}
        CONFIG.about = {**builtin.about, **CONFIG.about}
        CONFIG.default_checks = builtin.default_checks + CONFIG.default_checks


def load_plugins(folders: list[Path] | None = None) -> list[str]:
    """Load plugin files not loaded yet; returns warnings for failures.

    `folders` given by the caller are loaded as they are; by default the person's folder
    is, and the working folder's only when the person trusted it.
    """
    with _loading:
        return _load_plugins(folders)


def plugins_waiting() -> bool:
    """Whether a plugin file is there that is not loaded (not yet, or not trusted): what
    a session would choose may then still change when it loads them."""
    return any(
        path not in _plugins_loaded for folder in plugin_folders() for path in _plugin_files(folder)
    )


def _load_plugins(folders: list[Path] | None) -> list[str]:
    problems = []
    user = user_plugin_folder().resolve()
    for folder in folders if folders is not None else plugin_folders():
        files = _plugin_files(folder)
        if folders is None and folder.resolve() != user:
            sources = _consented(folder, files) if _project_plugins(folder, files) else None
        else:
            sources = {path: _read(path) for path in files if path not in _plugins_loaded}
        for path, source in (sources or {}).items():
            if path in _plugins_loaded:
                continue
            _plugins_loaded.add(path)
            try:
                _load_source(path, source)
            except Exception as e:
                message = f"elelem: skipped plugin {path}: {type(e).__name__}: {e}"
                problems.append(message)
                warnings.warn(message, stacklevel=2)
    return problems


def _project_plugins(folder: Path, files: list[Path]) -> bool:
    """Whether the site policy lets project plugins load; if not, say so once."""
    why = policy.load().project_files("plugins")
    if why and files and folder not in _skipped:
        _skipped[folder] = f"elelem: skipped the project plugins in {folder}: {why}"
        _tell(_skipped[folder])
    return why is None


def _plugin_files(folder: Path) -> list[Path]:
    """The regular `*.py` files directly in `folder`, resolved and sorted."""
    try:
        if not folder.is_dir():
            return []
        return sorted(p.resolve() for p in folder.glob("*.py") if p.is_file())
    except OSError:
        return []


def _read(path: Path) -> bytes | str:
    try:
        return trust.read_file(path)
    except OSError as e:
        return f"<unreadable: {e.strerror}>"


def _consented(folder: Path, files: list[Path]) -> dict[Path, bytes | str] | None:
    """The sources of the project plugin `files` of `folder` not loaded yet, as they were
    read for the trust check, when they may load; if not, say so once and return None."""

    pending = [p for p in files if p not in _plugins_loaded]
    if not pending:
        _skipped.pop(folder, None)
        return {}
    project = folder.parent.parent
    read = trust.contents(project)
    state = trust.status(project, read)
    if state == "trusted":
        _skipped.pop(folder, None)
        hashed = {path.resolve(): data for path, data in read.items()}
        return {path: hashed[path] for path in pending if path in hashed}
    names = ", ".join(p.name for p in pending)
    count = f"{len(pending)} project plugin{'s' if len(pending) > 1 else ''}"
    why = (
        "its project files changed since the folder was trusted; check them, then trust "
        "it again with"
        if state == "changed"
        else "this folder is not trusted; to load them, trust it with"
    )
    line = f"elelem: skipped {count} in {folder} ({names}): {why} {trust.how_to_trust(project)}"
    _skipped[folder] = line
    _tell(line)
    return None


def _tell(line: str) -> None:
    if line in _told:
        return
    _told.add(line)
    if _notify is not None:
        _notify(line)
    else:
        warnings.warn(line, UntrustedPluginsWarning, stacklevel=4)


def _load_source(path: Path, source: bytes | str) -> None:
    """Run plugin `path` from `source`, the bytes read (and for a project, hashed) once.

    Compiled and run into a fresh module: never through an import loader, which would run
    `__pycache__/*.pyc` (an unchecked-hash one is never compared with the source) or an
    extension module next to it instead of what was trusted.
    """
    if isinstance(source, str):
        raise ImportError(f"cannot load it: {source.strip('<>')}")
    name = f"elelem_plugin_{abs(hash(str(path)))}"
    code = compile(source, str(path), "exec", dont_inherit=True)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _entry_points() -> dict[str, EntryPoint]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group="elelem_kernel.providers")}


def provider_names() -> list[str]:
    """Every provider that `-p NAME` can resolve."""
    load_plugins()
    return sorted(set(CONFIG.providers) | set(_entry_points()))


def describe_provider(name: str) -> str:
    """The one-line description a plugin gave provider `name`, or ""."""
    load_plugins()
    about = CONFIG.about.get(name)
    if about is None:
        return ""
    try:
        return about()
    except Exception as e:
        return f"unavailable: {type(e).__name__}: {e}"


def create_provider(name: str, model: str | None = None, **options: Any) -> Provider:
    """A new provider `name`: plugins first, then the entry point group, else ConfigError.

    A factory may return any object with `fetch` (the README's plugin does): one that is
    not a `Provider` is wrapped (`events.Foreign`), so the session asks every provider
    the same way."""
    load_plugins()
    factory = CONFIG.providers.get(name)
    if factory is None:
        ep = _entry_points().get(name)
        if ep is None:
            available = ", ".join(provider_names())
            untrusted = "".join(f"\n{line}" for line in skipped())
            raise ConfigError(f'unknown provider: "{name}". Available: {available}{untrusted}')
        factory = ep.load()
    return as_provider(factory(model=model, **options))


def provider_factory(name: str) -> object:
    """What makes provider `name` now: the factory a plugin or the built-ins registered
    (plugins not loaded yet are loaded first), else the name, for the entry point group.
    A session keeps a provider it made only while this stays the same, so re-registering
    a name (a notebook cell's `config.provider`, a plugin file) takes effect at once."""
    load_plugins()
    return CONFIG.providers.get(name, name)


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


def create_with_env(name: str, model: str | None, chosen: Mapping[str, object]) -> Provider:
    """Provider `name` made with ELELEM_OPTIONS under `chosen`; errors say where options came from."""
    env = options.from_env()
    given = {**env, **chosen}
    if given.get(context.OPTION) is not None:
        context.parse_window(given[context.OPTION])  # the session reads it; not the provider
    given.pop(context.OPTION, None)
    if given.get(media.OPTION) is not None:
        media.parse_vision(given[media.OPTION])  # the session reads these two
    if given.get(media.LIMIT_OPTION) is not None:
        media.parse_limit(given[media.LIMIT_OPTION])
    given.pop(media.OPTION, None)
    given.pop(media.LIMIT_OPTION, None)
    if given.get(pricing.OPTION) is not None:
        pricing.parse_price(given[pricing.OPTION])  # the session prices with it
    given.pop(pricing.OPTION, None)
    try:
        return create_provider(name, model=model, **given)
    except ConfigError as error:
        if not set(env) - set(chosen):
            raise
        raise ConfigError(f"{error} ({options.ENV} sets {', '.join(sorted(env))})") from None


def run_setups(session: object, setups: dict[str, Setup]) -> None:
    """Run each of `setups` on `session`; one that fails is a warning naming it."""
    for name, setup in setups.items():
        try:
            setup(session)
        except Exception as e:
            warnings.warn(f"elelem: setup {name!r} failed: {type(e).__name__}: {e}", stacklevel=3)


def load_trusted_plugins(session: object | None = None) -> list[str]:
    """After a folder was trusted: load its plugins now and run the setups they add on
    `session`, so their providers, tools and commands work without a restart. Returns
    lines saying what changed (and what is still skipped)."""
    setups, providers = dict(CONFIG.setups), set(CONFIG.providers)
    lines = load_plugins()
    added = sorted(set(CONFIG.providers) - providers)
    if added:
        lines.append("New providers: " + ", ".join(f"`{name}`" for name in added) + ".")
    new = {name: fn for name, fn in CONFIG.setups.items() if setups.get(name) is not fn}
    if new and session is not None:
        run_setups(session, new)
        lines.append("Set up in this session: " + ", ".join(f"`{name}`" for name in new) + ".")
    return lines + skipped()
