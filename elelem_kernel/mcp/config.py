"""MCP server configuration: the `.mcp.json` files people already have, merged.

Files, later names winning: `~/.agents/mcp.json`, `.mcp.json` at the workspace root (Claude
Code's project file), `.agents/mcp.json` in the workspace. The format is
`{"mcpServers": {NAME: {...}}}` or VS Code's `{"servers": {...}}`; a stdio server is
`{"command", "args"?, "env"?, "cwd"?}`, a remote one `{"type": "http"|"sse", "url",
"headers"?}`; `"timeout"` (seconds per tool call) and `"disabled": true` are optional.
`${VAR}` and `${VAR:-default}` are expanded in command, args, env, cwd, url and headers.

Project files can start programs, so they count only in a folder the person trusted; in
another their servers are listed as skipped with the command that trusts the folder, and
never replace a server of the same name from the person's own file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from elelem_kernel.agent.policy import load as load_policy
from elelem_kernel.agent.trust import contents, how_to_trust, status

TRANSPORTS = ("stdio", "http", "sse")
CALL_TIMEOUT = 60.0  #: seconds a tool call may take unless the server says otherwise
#: What the names of configured servers' tools start with: `mcp__SERVER__TOOL`.
PREFIX = "mcp__"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ServerConfig:
    """One configured server: how to reach it, where it was configured, and its state."""

    name: str
    source: str
    transport: str = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    timeout: float = CALL_TIMEOUT
    disabled: bool = False
    skipped: str | None = None  #: why it will not start (an untrusted folder), else None
    shown: str = ""  #: the command line or URL as written, `${VAR}` unexpanded, for `/mcp`

    @property
    def secrets(self) -> list[str]:
        """The values of `env` and `headers`: never shown, never recorded."""
        return [value for _, value in (*self.env, *self.headers) if len(value) >= 4]

    @property
    def target(self) -> str:
        """What runs or is reached, as written (variables unexpanded), for `/mcp`."""
        if self.shown:
            return self.shown
        if self.transport == "stdio":
            return shell_words([self.command, *self.args])
        return self.url


#: A word a shell reads as it is, `${VAR}` and `${VAR:-default}` included.
_PLAIN = re.compile(r"[\w@%+=:,./${}-]+")


def shell_words(words: list[str]) -> str:
    """`words` as one command line a person can paste: quoted where a shell would split
    or change them, `${VAR}` as written."""
    import shlex  # only to show a server's command: not for every session's config read

    return " ".join(w if _PLAIN.fullmatch(w) else shlex.quote(w) for w in words)


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`${VAR}` and `${VAR:-default}` replaced from the environment (unset: empty)."""
    env: Mapping[str, str] = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = env.get(name)
        if found:
            return found
        return default if default is not None else ""

    return _VAR.sub(value, text)


def config_files(workspace: Path) -> list[tuple[Path, bool]]:
    """The files read, in merge order, each with whether it belongs to the project."""
    return [
        (Path.home() / ".agents" / "mcp.json", False),
        (workspace / ".mcp.json", True),
        (workspace / ".agents" / "mcp.json", True),
    ]


def load(workspace: Path | str) -> tuple[dict[str, ServerConfig], list[str]]:
    """Every configured server by name, and one warning per bad file or entry; a server
    the site policy does not allow, or from a project file it turns off, is skipped."""

    workspace = Path(workspace)
    policy = load_policy()
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    read: dict[Path, bytes | str] | None = None  # the project files, read once for both
    trusted = False  # the trust check and the servers, so what starts is what was hashed
    for path, project in config_files(workspace):
        skipped = None
        if project:
            if read is None:
                read = contents(workspace)
                trusted = status(workspace, read) == "trusted"
            if path not in read:
                continue
            if not trusted:
                skipped = f"the folder is not trusted; trust it with {how_to_trust(workspace)}"
            skipped = policy.project_files("mcp") or skipped
        elif not path.is_file():
            continue
        try:
            data = read[path] if project and read is not None else path.read_bytes()
            if isinstance(data, str):
                raise OSError(0, data.strip("<>"))
            entries = _entries(json.loads(data.decode("utf-8")))
        except (OSError, ValueError) as e:
            problems.append(f"MCP config {path}: {_why(e)}; its servers were skipped")
            continue
        for name, entry in entries.items():
            if skipped and name in servers and not servers[name].skipped:
                continue  # an entry that will not run never displaces one that will
            try:
                servers[name] = parse(name, entry, str(path), skipped, workspace)
            except ValueError as e:
                problems.append(f"MCP config {path}: server {name!r}: {e}; skipped")
    return servers, problems


def _why(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"invalid JSON at line {error.lineno} column {error.colno} ({error.msg})"
    if isinstance(error, OSError):
        return f"cannot read it ({error.strerror})"
    return str(error)


def _entries(data: object) -> dict[str, object]:
    if not isinstance(data, dict):
        raise ValueError('the file must hold a JSON object like {"mcpServers": {...}}')
    entries = data.get("mcpServers", data.get("servers"))
    if entries is None:
        raise ValueError('no "mcpServers" (or VS Code\'s "servers") object in it')
    if not isinstance(entries, dict):
        raise ValueError('"mcpServers" must be an object of server name -> settings')
    return entries


def parse(
    name: str,
    entry: object,
    source: str,
    skipped: str | None = None,
    workspace: Path | None = None,
    literal: bool = False,
) -> ServerConfig:
    """One server entry checked and expanded; ValueError says what is wrong.

    A stdio server runs in the workspace (as in other tools, a project's relative paths
    mean the project's), or in `cwd`, relative to the workspace. With `literal`, `${VAR}`
    is kept as written: an ACP client's servers must not read this process's environment.
    A server the site policy does not allow (by name or command) is skipped, saying so.
    """
    server = _parse(name, entry, source, skipped, workspace, literal)
    refused = load_policy().mcp_refusal(name, server.command or server.url)
    return replace(server, skipped=refused) if refused else server


def _parse(
    name: str,
    entry: object,
    source: str,
    skipped: str | None,
    workspace: Path | None,
    literal: bool,
) -> ServerConfig:
    fill = _as_written if literal else expand
    if not _NAME.match(name) or "__" in name:
        raise ValueError("names are letters, digits, '-' and single '_' (64 at most)")
    if not isinstance(entry, dict):
        raise ValueError("settings must be an object")
    kind = entry.get("type") or ("stdio" if "command" in entry else "http")
    kind = {"streamable-http": "http", "streamableHttp": "http", "local": "stdio"}.get(kind, kind)
    if kind not in TRANSPORTS:
        raise ValueError(f'"type" must be one of {", ".join(TRANSPORTS)}, not {kind!r}')
    timeout = entry.get("timeout", CALL_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError('"timeout" must be a positive number of seconds')
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ValueError('"disabled" must be true or false')
    common: dict[str, Any] = {
        "name": name,
        "source": source,
        "transport": kind,
        "timeout": float(timeout),
        "disabled": disabled,
        "skipped": skipped,
    }
    if kind == "stdio":
        command = _text(entry, "command", required=True)
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError('"args" must be a list of strings')
        cwd = _text(entry, "cwd")
        return ServerConfig(
            **common,
            shown=shell_words([command, *args]),
            command=fill(command),
            args=tuple(fill(a) for a in args),
            env=_pairs(entry, "env", fill),
            cwd=str(Path(workspace or Path.cwd()) / fill(cwd)),
        )
    url = fill(_text(entry, "url", required=True))
    if not url.startswith(("http://", "https://")):
        raise ValueError('"url" must start with http:// or https://')
    return ServerConfig(
        **common, url=url, headers=_pairs(entry, "headers", fill), shown=_text(entry, "url")
    )


def _text(entry: Mapping[str, object], key: str, required: bool = False) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value:
        raise ValueError(f'"{key}" must be a non-empty string')
    return value


def _as_written(text: str) -> str:
    return text


def _pairs(
    entry: Mapping[str, object], key: str, fill: Callable[[str], str]
) -> tuple[tuple[str, str], ...]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in value.items()
    ):
        raise ValueError(f'"{key}" must be an object of names to strings')
    return tuple((k, fill(str(v))) for k, v in value.items())
