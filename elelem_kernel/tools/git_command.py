"""Neutral git invocations: every git process the package starts is built here.

A repository's own configuration (`.git/config`, a downloaded project, an unpacked archive)
and the environment can make git run programs: `core.fsmonitor` on every index read,
`core.pager`, `diff.external`, textconv and filter drivers named in `.gitattributes`,
`gpg.program` when a signature is shown, hooks, a transport (`ext::`) for a lazy fetch in
a partial clone. Read-only tools must run none of them, so each call gets:

- `--no-pager` and `-c` overrides for every program-running setting git reads in the
  commands used here (`NEUTRAL_CONFIG`);
- with `drivers=True` (commands that read work-tree content: diff, blame, status), the
  filter, textconv and external-diff drivers the repository defines, each set to empty,
  and a refusal when the config points the command at a file outside the work tree
  (`blame.ignoreRevsFile`, which no override can take back);
- the work tree pinned to the folder holding `.git` (`work_tree`), whatever
  `core.worktree` says;
- a neutral environment (`environment`): no `GIT_*` variable of the caller passes
  through, no system config, no prompts, no optional index writes, no transport at all.

The person's global config (`~/.gitconfig`) is kept: it is theirs, as `~/.agents` is, and
it carries `safe.directory` and excludes that reviews and listings need; the overrides
above win over it too.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from elelem_kernel.errors import ToolError

#: Settings that run programs (or write), made inert for every call.
NEUTRAL_CONFIG: dict[str, str] = {
    "core.pager": "cat",
    "core.fsmonitor": "false",
    # an empty hooksPath is accepted by git 2.39 too; /dev/null can hold no hook at all
    "core.hooksPath": os.devnull,
    "diff.external": "",
    "log.showSignature": "false",
    "gpg.program": "",
    "gpg.openpgp.program": "",
    "gpg.ssh.program": "",
    "gpg.x509.program": "",
    # a folder that merely looks like a bare repository (files a write could make) is none
    "safe.bareRepository": "explicit",
    # names as UTF-8 rather than octal escapes: callers read them back as paths
    "core.quotePath": "false",
}

#: Environment set for every call, after every inherited `GIT_*` variable is dropped.
NEUTRAL_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "LC_ALL": "C",
    # `git status` must not write the index (which would run post-index-change hooks)
    "GIT_OPTIONAL_LOCKS": "0",
    # no transport is allowed: a partial clone's lazy fetch would run `ext::` commands
    "GIT_ALLOW_PROTOCOL": "",
}

#: Settings naming a file a subcommand reads and may echo (an error quoting its lines).
READ_FILES = {"blame.ignorerevsfile": "blame"}

#: Repository-defined drivers that run programs on file content.
DRIVER_KEY = re.compile(
    r"(?:filter\..+\.(?:clean|smudge|process)|diff\..+\.(?:textconv|command))",
    re.IGNORECASE,
)


def environment(blank: Sequence[str] = ()) -> dict[str, str]:
    """`os.environ` without any `GIT_*` variable, plus `NEUTRAL_ENV`.

    `blank` names config keys set to empty for the call. They go through
    `GIT_CONFIG_KEY_n` rather than `-c`, which cuts `key=value` at the first `=`, and a
    driver's name may hold one (`filter.a=b.clean`).
    """
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("GIT_")}
    env.update(NEUTRAL_ENV)
    for i, key in enumerate(blank):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = ""
    if blank:
        env["GIT_CONFIG_COUNT"] = str(len(blank))
    return env


def argv(root: str | os.PathLike[str], *args: str) -> list[str]:
    """`git --no-pager -c ... --work-tree=... -C root args...` with the neutral settings."""
    config = [f"{key}={value}" for key, value in NEUTRAL_CONFIG.items()]
    pairs = [word for item in config for word in ("-c", item)]
    tree = work_tree(root)
    pinned = [f"--work-tree={tree}"] if tree is not None else []
    return ["git", "--no-pager", *pairs, *pinned, "-C", os.fspath(root), *args]


def work_tree(folder: str | os.PathLike[str]) -> Path | None:
    """The folder holding the `.git` that git finds from `folder`, or None.

    git is told this is the work tree, so a repository's `core.worktree` cannot point
    its commands (grep, diff, blame) at files outside the folder that holds it.
    """
    start = Path(os.path.abspath(folder))
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def repository_config(root: str | os.PathLike[str]) -> list[tuple[str, str | None]]:
    """Every config entry git reads in `root` (key lowercased but for subsections, value)."""
    cmd = ["git", "--no-pager", "-C", os.fspath(root), "config", "--list", "-z"]
    proc = subprocess.run(
        cmd, capture_output=True, stdin=subprocess.DEVNULL, env=environment(), timeout=30
    )
    entries: list[tuple[str, str | None]] = []
    for item in proc.stdout.decode("utf-8", "replace").split("\0"):
        if item:
            key, newline, value = item.partition("\n")
            entries.append((key, value if newline else None))
    return entries


def driver_keys(entries: Sequence[tuple[str, str | None]]) -> list[str]:
    """The keys among `entries` that name a filter or diff driver's program."""
    return list(dict.fromkeys(key for key, _ in entries if DRIVER_KEY.fullmatch(key)))


def check_read_files(
    root: str | os.PathLike[str], command: str, entries: Sequence[tuple[str, str | None]]
) -> None:
    """Raise `ToolError` when `command` would read (and may echo) a file outside the work
    tree that the config names. `-c` cannot take such a setting back: blame reads every
    `blame.ignoreRevsFile` given, and an empty one resets nothing set elsewhere."""
    tree = work_tree(root) or Path(os.path.abspath(root))
    for key, value in entries:
        if READ_FILES.get(key) != command or not value:
            continue
        path = Path(os.path.expanduser(value))
        real = (Path(os.path.abspath(root)) / path).resolve()
        if not real.is_relative_to(tree.resolve()):
            raise ToolError(
                f"the repository's config sets {key} = {value}, a file outside the "
                f"repository that git {command} would read; git {command} is not run here"
            )


def run(
    root: str | os.PathLike[str],
    *args: str,
    drivers: bool = False,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """Run neutral `git args...` in `root`; output captured as bytes, stdin closed.

    `drivers=True` (one extra `git config` call; use it for commands that read work-tree
    files) also blanks the filter and diff drivers the repository configures and refuses
    (`ToolError`) a command the config points at a file outside the work tree. Raises what
    `subprocess.run` raises too (`FileNotFoundError` without git, `TimeoutExpired`).
    """
    blank: list[str] = []
    if drivers:
        entries = repository_config(root)
        blank = driver_keys(entries)
        check_read_files(root, args[0] if args else "", entries)
    return subprocess.run(
        argv(root, *args),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=environment(blank),
        timeout=timeout,
    )


def popen(folder: str | os.PathLike[str], *args: str) -> subprocess.Popen[bytes]:
    """Start neutral `git args...` in `folder`, stdout piped, stdin and stderr closed."""
    return subprocess.Popen(
        argv(folder, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(),
    )
