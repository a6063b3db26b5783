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
- never a look into a submodule (`SUBMODULE_BLIND`, and settings in `NEUTRAL_CONFIG`):
  a submodule's own config names drivers no override here reaches;
- every setting of the repository's own config that names a file to read (`FILE_KEY`)
  kept only when it is a regular file inside the repository, else `/dev/null`; includes
  checked before git reads them, and a refusal when one is not (`repository_entries`);
- a refusal when `.git` leads to a repository outside the folder that is neither its
  linked worktree nor its submodule (`locate`);
- the work tree pinned to the folder holding `.git` (`work_tree`), whatever
  `core.worktree` says;
- a neutral environment (`environment`): no `GIT_*` variable of the caller passes
  through, no system config, no prompts, no optional index writes, no transport at all;
- no repository above the workspace's own root (`workspace.find_root`: a `.elelem-workspace`
  marker, `ELELEM_WORKSPACE_CEILING`): git's search stops there (`GIT_CEILING_DIRECTORIES`).

The person's global config (`~/.gitconfig`) is kept: it is theirs, as `~/.agents` is, and
it carries `safe.directory` and excludes that reviews and listings need; the overrides
above win over it too.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.workspace import find_root

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
    # never look into a submodule (its own config names drivers no override here reaches)
    "diff.ignoreSubmodules": "all",
    "status.submoduleSummary": "false",
    "submodule.recurse": "false",
    "diff.submodule": "short",
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

#: Subcommands that would look into submodules' work trees (running the drivers their own
#: configs name): each gets `--ignore-submodules=all`, which wins over `.gitmodules` too.
SUBMODULE_BLIND = frozenset({"diff", "status", "log", "show", "diff-index", "diff-files"})

#: Multi-valued settings naming a file a subcommand reads (and may echo): no override takes
#: them back, so the subcommand is refused when one names a file outside the repository.
READ_FILES = {"blame.ignorerevsfile": "blame"}

#: Settings that name a file for git to read, by their last part (`core.attributesFile`,
#: `diff.orderFile`, `mailmap.file`, `core.excludesFile`, `init.templateDir`,
#: `commit.template`, `gpg.ssh.allowedSignersFile`, any future `*File`/`*Path`/`*Dir`). A
#: value set by the repository is kept only when it names a regular file inside it; any
#: other is set to the empty device, so git never reads a device, a FIFO or a file
#: elsewhere (a mailmap outside would show up in `log --format=%aN`).
FILE_KEY = re.compile(r"(?:.*(?:file|path|dir|directory)|.*\.template|mailmap\.blob)", re.I)
#: Named like a file setting but handled otherwise: includes are checked before git reads
#: them, the work tree is pinned (`work_tree`), hooks are off, ignore-revs files refused.
NOT_FILE_KEYS = frozenset(
    {"include.path", "core.worktree", "core.hookspath", "blame.ignorerevsfile"}
)
INCLUDE_KEY = re.compile(r"include(?:if\..*)?\.path", re.I)
MAX_INCLUDE_DEPTH = 10  #: as git's own limit

#: Repository-defined drivers that run programs on file content.
DRIVER_KEY = re.compile(
    r"(?:filter\..+\.(?:clean|smudge|process)|diff\..+\.(?:textconv|command))",
    re.IGNORECASE,
)


def environment(
    settings: Mapping[str, str] | Sequence[str] = (), root: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """`os.environ` without any `GIT_*` variable, plus `NEUTRAL_ENV`; with `root`, git's
    search for a repository stops at the top of its workspace (`ceiling`).

    `settings` are config overrides for the call (a sequence of keys means each set to
    empty). They go through `GIT_CONFIG_KEY_n` rather than `-c`, which cuts `key=value` at
    the first `=`, and a driver's name may hold one (`filter.a=b.clean`).
    """
    pairs = settings.items() if isinstance(settings, Mapping) else ((k, "") for k in settings)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("GIT_")}
    env.update(NEUTRAL_ENV)
    count = 0
    for count, (key, value) in enumerate(pairs, 1):
        env[f"GIT_CONFIG_KEY_{count - 1}"] = key
        env[f"GIT_CONFIG_VALUE_{count - 1}"] = value
    if count:
        env["GIT_CONFIG_COUNT"] = str(count)
    above = ceiling(root) if root is not None else None
    if above is not None:
        env["GIT_CEILING_DIRECTORIES"] = os.fspath(above)
    return env


def ceiling(root: str | os.PathLike[str]) -> Path | None:
    """The folder git must not climb into from `root`: the parent of `root`'s workspace
    root when that root is no repository (a marked folder, the ceiling), else None."""
    top = find_root(root)
    if os.path.lexists(top / ".git") or top.parent == top:
        return None
    return top.parent


def argv(root: str | os.PathLike[str], *args: str) -> list[str]:
    """`git --no-pager -c ... --work-tree=... -C root args...` with the neutral settings;
    subcommands that could look into submodules get `--ignore-submodules=all` first."""
    config = [f"{key}={value}" for key, value in NEUTRAL_CONFIG.items()]
    pairs = [word for item in config for word in ("-c", item)]
    tree = work_tree(root)
    pinned = [f"--work-tree={tree}"] if tree is not None else []
    if args and args[0] in SUBMODULE_BLIND:
        args = (args[0], "--ignore-submodules=all", *args[1:])
    return ["git", "--no-pager", *pairs, *pinned, "-C", os.fspath(root), *args]


def work_tree(folder: str | os.PathLike[str]) -> Path | None:
    """The folder holding the `.git` that git finds from `folder`, or None.

    git is told this is the work tree, so a repository's `core.worktree` cannot point
    its commands (grep, diff, blame) at files outside the folder that holds it.
    """
    start = Path(os.path.abspath(folder))
    above = ceiling(start)
    for candidate in (start, *start.parents):
        if above is not None and candidate.resolve() == above:
            return None
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


@dataclass(frozen=True)
class Repository:
    """Where a work tree's repository keeps its files."""

    tree: Path  #: the folder holding `.git`, resolved
    git_dir: Path  #: what `.git` is or points to, resolved
    common_dir: Path  #: the main repository's folder (differs for a linked worktree)

    def inside(self, path: Path) -> bool:
        """Whether resolved `path` is in the work tree or the repository's own folders."""
        return any(path.is_relative_to(top) for top in (self.tree, self.git_dir, self.common_dir))

    def config_files(self) -> list[Path]:
        """The repository's own config files git reads (includes come on top)."""
        files = [self.common_dir / "config", self.git_dir / "config.worktree"]
        return [path for path in dict.fromkeys(files) if os.path.lexists(path)]


def locate(folder: str | os.PathLike[str]) -> Repository | None:
    """The repository git uses from `folder` (None outside one), or `ToolError` when its
    `.git` leads to a repository elsewhere that is not a linked worktree or submodule of
    this folder (`gitdir: ../other/.git` would let tools read another project)."""
    tree = work_tree(folder)
    if tree is None:
        return None
    tree = tree.resolve()
    dot_git = tree / ".git"
    git_dir = _gitdir_of(dot_git)
    if git_dir is None:
        return None
    common = git_dir
    try:
        if _regular(git_dir / "commondir"):
            common = (git_dir / _small_text(git_dir / "commondir")).resolve()
        own = git_dir.is_relative_to(tree) or _points_back(git_dir, dot_git, tree)
    except OSError:
        own = False
    if not own:
        raise ToolError(
            f"{dot_git} leads to {git_dir}, a repository outside {tree} that is neither a "
            "linked worktree nor a submodule of it; git is not run here (open the "
            "repository itself as the workspace)"
        )
    return Repository(tree, git_dir, common)


def _gitdir_of(dot_git: Path) -> Path | None:
    if dot_git.is_dir():
        return dot_git.resolve()
    try:
        text = _small_text(dot_git) if _regular(dot_git) else ""
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (dot_git.parent / text[len("gitdir:") :].strip()).resolve()


def _points_back(git_dir: Path, dot_git: Path, tree: Path) -> bool:
    """Whether `git_dir` is this folder's own: a linked worktree whose `gitdir` file names
    our `.git`, or a submodule whose `core.worktree` names our folder."""
    back = git_dir / "gitdir"
    if _regular(back) and (git_dir / _small_text(back)).resolve() == dot_git.resolve():
        return True
    config = git_dir / "config"
    if not _regular(config):
        return False
    for key, value in file_entries(config):
        if key == "core.worktree" and value and (git_dir / value).resolve() == tree:
            return True
    return False


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _small_text(path: Path) -> str:
    """The first line of a small pointer file (`.git`, `commondir`, `gitdir`)."""
    with open(path, "rb") as f:
        return f.read(4096).decode("utf-8", "replace").partition("\n")[0].strip()


def file_entries(path: Path) -> list[tuple[str, str | None]]:
    """The entries of one config file, its includes not followed, read outside any
    repository (so no other config is read on the way)."""
    cmd = ["git", "--git-dir=/nonexistent", "config", "--file", os.fspath(path)]
    return _entries(cmd + ["--list", "--no-includes", "-z"], cwd=os.path.abspath(os.sep))


def repository_entries(repo: Repository) -> list[tuple[str, str | None]]:
    """Every entry the repository's own config files set, includes followed after each
    was checked: an include must name a regular file inside the repository, else
    `ToolError` (git reads includes before any override applies: a FIFO or device there
    would hang or flood every call, a file elsewhere would be read as config)."""
    found: list[tuple[str, str | None]] = []
    pending = [(path, 0) for path in repo.config_files()]
    while pending:
        path, depth = pending.pop(0)
        if not _regular(path) or not repo.inside(path.resolve()):
            raise ToolError(
                f"the repository's config file {path} is not a regular file inside it; "
                "git is not run here"
            )
        entries = file_entries(path)
        found.extend(entries)
        for key, value in entries:
            if not INCLUDE_KEY.fullmatch(key) or not value:
                continue
            included = (path.parent / os.path.expanduser(value)).resolve()
            if depth >= MAX_INCLUDE_DEPTH or not (_regular(included) and repo.inside(included)):
                raise ToolError(
                    f"the repository's config includes {value} ({key}), which is not a "
                    "regular file inside the repository; git is not run here"
                )
            pending.append((included, depth + 1))
    return found


def file_overrides(
    repo: Repository, root: str | os.PathLike[str], entries: Sequence[tuple[str, str | None]]
) -> dict[str, str]:
    """Overrides for the file settings among the repository's `entries` (`FILE_KEY`):
    kept when they name a regular file inside the repository (read from `root` or the work
    tree), else set to the empty device."""
    overrides: dict[str, str] = {}
    for key, value in entries:
        lowered = key.lower()
        if lowered in NOT_FILE_KEYS or INCLUDE_KEY.fullmatch(key) or not FILE_KEY.fullmatch(key):
            continue
        if value and _kept_file(repo, root, value):
            overrides.pop(key, None)
        else:
            overrides[key] = os.devnull
    return overrides


def _kept_file(repo: Repository, root: str | os.PathLike[str], value: str) -> bool:
    named = os.path.expanduser(value)
    places = {(Path(os.path.abspath(base)) / named).resolve() for base in (root, repo.tree)}
    return all(_regular(place) and repo.inside(place) for place in places)


def repository_config(root: str | os.PathLike[str]) -> list[tuple[str, str | None]]:
    """Every config entry git reads in `root` (key lowercased but for subsections, value).

    Call it only after `repository_entries` checked the includes."""
    return _entries(["git", "--no-pager", "-C", os.fspath(root), "config", "--list", "-z"])


def _entries(cmd: list[str], cwd: str | None = None) -> list[tuple[str, str | None]]:
    proc = subprocess.run(
        cmd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=environment(),
        timeout=30,
        cwd=cwd,
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
        if READ_FILES.get(key.lower()) != command or not value:
            continue
        path = Path(os.path.expanduser(value))
        real = (Path(os.path.abspath(root)) / path).resolve()
        if not real.is_relative_to(tree.resolve()) or not _regular(real):
            raise ToolError(
                f"the repository's config sets {key} = {value}, not a regular file inside "
                f"the repository, which git {command} would read; git {command} is not run here"
            )


def settings(
    root: str | os.PathLike[str], command: str = "", drivers: bool = False
) -> dict[str, str]:
    """The per-call overrides for running `command` in `root` (see the module doc);
    `ToolError` when git must not run there at all."""
    repo = locate(root)
    if repo is None:
        return {}
    own = repository_entries(repo)
    overrides = file_overrides(repo, root, own)
    check_read_files(root, command, own)
    if drivers:
        overrides.update(dict.fromkeys(driver_keys(repository_config(root)), ""))
    return overrides


def run(
    root: str | os.PathLike[str],
    *args: str,
    drivers: bool = False,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """Run neutral `git args...` in `root`; output captured as bytes, stdin closed.

    The repository's file settings are checked first (`settings`); `drivers=True` (one
    extra `git config` call; use it for commands that read work-tree files) also blanks
    the filter and diff drivers the config defines. Raises `ToolError` when the repository
    may not be read (see `locate`, `repository_entries`, `check_read_files`), and what
    `subprocess.run` raises (`FileNotFoundError` without git, `TimeoutExpired`).
    """
    overrides = settings(root, args[0] if args else "", drivers)
    return subprocess.run(
        argv(root, *args),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=environment(overrides, root),
        timeout=timeout,
    )


def popen(folder: str | os.PathLike[str], *args: str) -> subprocess.Popen[bytes]:
    """Start neutral `git args...` in `folder`, stdout piped, stdin and stderr closed;
    `ToolError` as `run` raises it."""
    return subprocess.Popen(
        argv(folder, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(settings(folder, args[0] if args else ""), folder),
    )
