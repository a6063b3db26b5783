"""The site policy: what an administrator allows elelem to do on this machine or hub.

`elelem_policy.json` is read from Jupyter's system config folders only (`/etc/jupyter`,
`/usr/local/etc/jupyter`, `{sys.prefix}/etc/jupyter`), then the file `ELELEM_POLICY`
names. Each file found narrows what the ones before it allow (a name must pass every
file's allow list; blocks, denials and budgets add up), so no file, and nothing the person
sets, loosens another. A file that cannot be read or does not follow the format stops
elelem with a `ConfigError` naming it: elelem never runs as if it were not there.

    {"providers": {"allow": ["openai"], "block": []},
     "models": {"allow": ["gpt-4o*"], "block": ["*-preview"]},
     "default": {"provider": "openai", "model": "gpt-4o-mini", "base_url": "https://gw/v1"},
     "options": {"openai": {"max_tokens": 4096}},
     "modes": {"allow": ["plan", "build", "verify"]},
     "tools": {"deny": ["bash"], "ask": ["write", "edit"]},
     "mcp": {"allow": ["github", "npx"], "project_files": false},
     "plugins": {"project": false},
     "budget": {"session": "2", "day": "20"},
     "message": "Ask it-help@example.com for more."}

Lists hold globs (`fnmatch`, case-sensitive: `*` crosses `/`, so `openai/*` works; the
patterns are the administrator's and the names short, unlike the model's path globs that
`tools/globs.py` matches). `options` are fixed per provider (a glob
too): the person cannot set them otherwise. Budgets take the forms of `--budget`.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent.budget import Budget, parse
from elelem_kernel.agent.toolbox import MODES
from elelem_kernel.errors import ConfigError
from elelem_kernel.options import from_env

if TYPE_CHECKING:
    from elelem_kernel.agent.catalog import ProviderCatalog
    from elelem_kernel.events import Provider

ENV = "ELELEM_POLICY"
FILE_NAME = "elelem_policy.json"
#: A policy is a few lines; a file larger than this is a mistake, not read into memory.
MAX_BYTES = 1_000_000
#: Every key a policy file may have, and the keys inside each (None: a value, not a table).
KEYS: dict[str, tuple[str, ...] | None] = {
    "providers": ("allow", "block"),
    "models": ("allow", "block"),
    "default": ("provider", "model", "base_url"),
    "options": None,
    "modes": ("allow",),
    "tools": ("deny", "ask"),
    "mcp": ("allow", "project_files"),
    "plugins": ("project",),
    "budget": ("session", "day", "turn"),
    "message": None,
}
_LISTS = {"allow", "block", "deny", "ask"}
_FLAGS = {("mcp", "project_files"), ("plugins", "project")}


def system_folders() -> list[Path]:
    """Jupyter's system config folders, the only places a policy file is looked for."""
    env = Path(sys.prefix) / "etc" / "jupyter"
    return [Path("/etc/jupyter"), Path("/usr/local/etc/jupyter"), env]


@dataclass(frozen=True)
class PolicyFile:
    """One policy file as read: its path and its checked contents."""

    path: Path
    data: Mapping[str, Any]

    def get(self, table: str, key: str) -> Any:
        return (self.data.get(table) or {}).get(key)


@dataclass(frozen=True)
class Policy:
    """The policy files in force, broadest first; no files: nothing is restricted."""

    files: tuple[PolicyFile, ...] = ()
    budgets: tuple[Budget, ...] = field(default=(), compare=False)

    def __bool__(self) -> bool:
        return bool(self.files)

    @property
    def source(self) -> str:
        """Who sets it, for messages: the file(s) and the administrator."""
        paths = ", ".join(str(f.path) for f in self.files)
        return f"the site policy ({paths}, set by your administrator)"

    def _refused(self, what: str, allowed: str) -> str:
        words = " ".join(str(f.data["message"]) for f in self.files if f.data.get("message"))
        return f"{what} is not allowed by {self.source}; it allows {allowed}." + (
            f" {words}" if words else ""
        )

    def _refusal(self, table: str, names: Iterable[str], what: str) -> str | None:
        """Why `names` (a thing's names: any may match) fails `table`'s lists, or None."""
        names = [n for n in names if n]
        for file in self.files:
            allow, block = file.get(table, "allow"), file.get(table, "block") or []
            hit = [p for p in block if any(fnmatch.fnmatchcase(n, p) for n in names)]
            if hit:
                return self._refused(what, f"no {table} matching {', '.join(hit)}")
            if allow is not None and not any(_matches(n, allow) for n in names):
                return self._refused(what, f"{table}: {', '.join(allow) or 'none'}")
        return None

    # -- providers, models, options -------------------------------------------------

    def allows_provider(self, provider: str) -> bool:
        """Whether `provider` may be chosen (for lists that offer only what is allowed)."""
        return self._refusal("providers", [provider], provider) is None

    def check_provider(self, provider: str) -> None:
        """ConfigError in the policy's words when `provider` is not allowed."""
        why = self._refusal("providers", [provider], f'provider "{provider}"')
        if why:
            raise ConfigError(why)

    def check_model(self, provider: str, model: str | None) -> None:
        """ConfigError in the policy's words when `provider` or its `model` is not allowed
        (a model glob matches the model's name or `provider/model`)."""
        self.check_provider(provider)
        names = [model, f"{provider}/{model}"] if model else []
        why = self._refusal("models", names, f'model "{model or "(none named)"}"')
        if why:
            raise ConfigError(why)

    def make_provider(
        self, catalog: ProviderCatalog, name: str, model: str | None, chosen: Mapping[str, object]
    ) -> Provider:
        """Provider `name` made by `catalog` with the fixed options on the person's
        `chosen`; ConfigError in the policy's words when it or its model is not allowed."""
        self.check_provider(name)
        instance = catalog.create_with_env(name, model, self.options_for(name, chosen, from_env()))
        self.check_model(name, model if model is not None else instance.model)
        return instance

    def default(self, key: str) -> str | None:
        """The policy's default `provider`, `model` or `base_url`, or None."""
        return next((str(f.get("default", key)) for f in self.files if f.get("default", key)), None)

    def fixed_options(self, provider: str) -> dict[str, object]:
        """The options the policy fixes for `provider` (tables whose glob matches it)."""
        fixed: dict[str, object] = {}
        for file in reversed(self.files):
            for pattern, values in (file.data.get("options") or {}).items():
                if fnmatch.fnmatchcase(provider, pattern):
                    fixed.update(values)
        return fixed

    def options_for(
        self, provider: str, chosen: Mapping[str, object], env: Mapping[str, object]
    ) -> dict[str, object]:
        """`chosen` with the fixed options on top; ConfigError when the person set one of
        them (in `chosen` or ELELEM_OPTIONS `env`) to another value."""
        fixed = self.fixed_options(provider)
        for name, value in fixed.items():
            for given in (chosen, env):
                if name in given and str(given[name]) != str(value):
                    raise ConfigError(
                        self._refused(f"{name}={given[name]} for {provider}", f"{name}={value}")
                    )
        return {**chosen, **fixed}

    # -- modes, tools ------------------------------------------------------------------

    def allowed_modes(self) -> list[str]:
        """The modes every file allows, in the order of MODES; `plan` always (it offers
        only read tools, narrower than any mode, and a review runs in it)."""
        return [
            m
            for m in MODES
            if m == "plan"
            or all(
                _matches(m, f.get("modes", "allow"))
                for f in self.files
                if f.get("modes", "allow") is not None
            )
        ]

    def check_mode(self, mode: str) -> None:
        """ConfigError in the policy's words when `mode` is not allowed."""
        if mode not in self.allowed_modes():
            raise ConfigError(
                self._refused(f"mode {mode}", ", ".join(self.allowed_modes()) or "no mode")
            )

    def first_mode(self, wanted: str) -> str:
        """`wanted` if allowed, else the first allowed mode (for a default, not a choice)."""
        allowed = self.allowed_modes()
        return wanted if wanted in allowed or not allowed else allowed[0]

    def denies(self, tool: str) -> str | None:
        """Why tool `tool` is never offered, or None."""
        for file in self.files:
            hit = [p for p in file.get("tools", "deny") or [] if fnmatch.fnmatchcase(tool, p)]
            if hit:
                return self._refused(f'tool "{tool}"', f"no tool matching {', '.join(hit)}")
        return None

    def asks(self, tool: str) -> str | None:
        """Why every call of `tool` is asked (no mode, allow or "always" skips it), or None."""
        for file in self.files:
            if _matches(tool, file.get("tools", "ask") or []):
                return f"{self.source} asks before every {tool} call"
        return None

    # -- MCP servers and project plugins ---------------------------------------------

    def mcp_refusal(self, name: str, command: str) -> str | None:
        """Why MCP server `name` (run by `command`, or at a URL) may not start, or None."""
        names = [name, command, Path(command).name if command else ""]
        for file in self.files:
            allow = file.get("mcp", "allow")
            if allow is not None and not any(_matches(n, allow) for n in names if n):
                return self._refused(
                    f'MCP server "{name}"', f"servers: {', '.join(allow) or 'none'}"
                )
        return None

    def project_files(self, what: str) -> str | None:
        """Why project files of kind `what` ("mcp", "plugins") may not load, or None."""
        key = "project_files" if what == "mcp" else "project"
        if any(f.get(what, key) is False for f in self.files):
            label = "project MCP configs (.mcp.json)" if what == "mcp" else "project plugins"
            return f"{label} are turned off by {self.source}"
        return None

    # -- showing -------------------------------------------------------------------

    def describe(self) -> str:
        """What `/policy` and `elelem-kernel policy` say: each file and what it sets."""
        if not self.files:
            where = ", ".join(str(p / FILE_NAME) for p in system_folders())
            return f"No site policy is in force (looked for {where} and ${ENV})."
        parts = [f"Site policy in force, set by your administrator ({len(self.files)} file(s))."]
        for file in self.files:
            lines = [f"**{file.path}**"]
            for key, value in file.data.items():
                lines.append(f"- `{key}`: `{json.dumps(value, sort_keys=True)}`")
            parts.append("\n".join(lines))
        parts.append(
            "Your own settings (options, modes, budgets, ELELEM_* variables) can narrow this "
            "policy, never loosen it."
        )
        return "\n\n".join(parts)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def paths(
    environ: Mapping[str, str] | None = None, folders: list[Path] | None = None
) -> list[Path]:
    """The policy files that apply, broadest first (ELELEM_POLICY last, and it must exist)."""
    environ = os.environ if environ is None else environ
    found = [p / FILE_NAME for p in (system_folders() if folders is None else folders)]
    found = [p for p in dict.fromkeys(found) if p.exists()]
    named = environ.get(ENV, "").strip()
    if named:
        found.append(Path(named).expanduser())
    return found


_cache: dict[tuple[Any, ...], Policy] = {}


def load(environ: Mapping[str, str] | None = None, folders: list[Path] | None = None) -> Policy:
    """The policy in force; ConfigError naming the file that cannot be read or is malformed."""
    files = paths(environ, folders)
    key = tuple((str(p), *_stamp(p)) for p in files)
    if key not in _cache:
        read = tuple(read_file(p) for p in files)
        budgets = tuple(b for f in read for b in _budgets(f))
        _cache.clear()
        _cache[key] = Policy(read, budgets)
    return _cache[key]


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1)
    return (stat.st_mtime_ns, stat.st_size)


def read_file(path: Path) -> PolicyFile:
    """One policy file read and checked; ConfigError naming it and what is wrong."""
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise ConfigError(f"site policy {path}: larger than {MAX_BYTES:,} bytes; {_stop}")
        data = json.loads(raw.decode("utf-8"))
    except OSError as e:
        raise ConfigError(f"site policy {path}: cannot read it ({e.strerror}); {_stop}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"site policy {path}: not UTF-8 text; {_stop}") from None
    except ValueError as e:
        where = (
            f" at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        )
        raise ConfigError(f"site policy {path}: invalid JSON{where}; {_stop}") from None
    problem = _problem(data)
    if problem:
        raise ConfigError(f"site policy {path}: {problem}; {_stop}")
    file = PolicyFile(path, data)
    _budgets(file)
    return file


_stop = "elelem will not run until the administrator fixes it"


def _problem(data: object) -> str | None:
    """What is wrong with a policy's contents, or None."""
    if not isinstance(data, dict):
        return "it must be a JSON object"
    for key, value in data.items():
        if key not in KEYS:
            return f"unknown key {key!r} (keys: {', '.join(KEYS)})"
        if key == "message":
            if not isinstance(value, str):
                return '"message" must be a string'
            continue
        if not isinstance(value, dict):
            return f"{key!r} must be an object"
        if key == "options":
            bad = [p for p, v in value.items() if not isinstance(v, dict)]
            if bad:
                return f'"options" maps provider names to objects of options ({bad[0]!r} is not)'
            continue
        problem = _table_problem(key, value)
        if problem:
            return problem
    return None


def _table_problem(key: str, table: Mapping[str, object]) -> str | None:
    inner = KEYS[key] or ()
    for name, value in table.items():
        if name not in inner:
            return f"unknown key {key}.{name} (keys: {', '.join(inner)})"
        if (key, name) in _FLAGS:
            ok = isinstance(value, bool)
            kind = "true or false"
        elif name in _LISTS:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            kind = "a list of strings"
        else:
            ok = isinstance(value, str) or (key == "budget" and _number(value))
            kind = "a string"
        if not ok:
            return f"{key}.{name} must be {kind}"
    allowed = table.get("allow") if key == "modes" else None
    for name in allowed if isinstance(allowed, list) else ():
        if not any(fnmatch.fnmatchcase(m, name) for m in MODES):
            return f"modes.allow: {name!r} matches no mode ({', '.join(MODES)})"
    return None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _budgets(file: PolicyFile) -> list[Budget]:
    """The budgets `file` sets, each for the scope its key names."""
    found = []
    for per, text in (file.data.get("budget") or {}).items():
        try:
            budget = parse(str(text))
        except ConfigError as e:
            raise ConfigError(f"site policy {file.path}: budget.{per}: {e}; {_stop}") from None
        if budget is None or "/" in str(text):
            raise ConfigError(
                f"site policy {file.path}: budget.{per} must be an amount such as 2 or "
                f"'200k tokens'; {_stop}"
            )
        found.append(Budget(budget.amount, budget.unit, per))
    return found
