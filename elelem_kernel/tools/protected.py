"""Places in the workspace the file tools treat with care, because they can run code.

- Anything inside a `.git` folder (or a `.git` file) is refused to every write: a
  repository's config names programs git runs (`core.fsmonitor`, hooks, drivers), so a
  write there is command execution on the next git call.
- Files that run code when a program starts, so that the next program the person
  runs executes what the model wrote: plugin and MCP config locations (a `.agents`
  folder anywhere, a `.mcp.json` file) when elelem starts; a `.pth` in a
  `site-packages`, `sitecustomize.py`, `usercustomize.py`, a virtual environment's
  `bin/` when Python starts; `.ipython/`, `.jupyter/`, `jupyter_*_config.py|json`,
  `ipython_*config.py`, `share/jupyter/` and `etc/jupyter/` when IPython or Jupyter
  starts; `.envrc`, shell start-up files (bash, zsh, sh, csh, fish, xonsh, nushell,
  PowerShell, readline), `.gitconfig`, `.config/git/`, git hook folders (`.husky/`,
  `.githooks/`, the folder the repository's `core.hooksPath` names) and
  `.pre-commit-config.yaml`; and, for a workspace that is the home folder, what the
  person's other programs run: `.ssh/`, `.gnupg/`, desktop autostart and launchers,
  systemd user units, the folders on PATH (`.local/bin/`, `~/bin/`), editors', debuggers'
  and REPLs' start-up files (`STARTUP_NAMES`, `STARTUP_FOLDERS`, `STARTUP_PATHS`).
  A write there is asked every time, in every mode but `auto` (see `Session`
  approvals), whatever was allowed before.

Names are compared case-insensitively, as on the file systems of macOS and Windows, and
both the path as given and the path it resolves to (through symlinks) are checked.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path, PurePosixPath

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.workspace import Workspace

#: The why an approval preview gives for a plugin or MCP config.
STARTUP_CODE = "this file can run code when elelem starts: a plugin / MCP config"

SHELL = "a shell starts"
DESKTOP = "the desktop session starts"
#: File names (any folder) that a program the person runs next executes when it starts.
STARTUP_NAMES = {
    ".mcp.json": STARTUP_CODE,
    "sitecustomize.py": "Python starts (sitecustomize)",
    "usercustomize.py": "Python starts (usercustomize)",
    ".pdbrc": "the Python debugger starts (it runs these commands)",
    ".envrc": "the shell enters this folder (direnv)",
    ".direnvrc": "the shell enters a folder with an .envrc (direnv)",
    ".pre-commit-config.yaml": "git commits (pre-commit hooks)",
    ".gitconfig": "git runs (a git config names programs)",
    ".hgrc": "Mercurial runs (its config names hooks)",
    **dict.fromkeys(
        [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases"], SHELL
    ),
    **dict.fromkeys([".profile", ".login", ".logout", ".kshrc", ".mkshrc", ".xonshrc"], SHELL),
    **dict.fromkeys([".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout"], SHELL),
    **dict.fromkeys([".cshrc", ".tcshrc"], SHELL),
    ".inputrc": "a shell reads its key bindings (a key can type and run a command)",
    ".pam_environment": "the person logs in (it sets the environment of every program)",
    **dict.fromkeys([".xprofile", ".xinitrc", ".xsession", ".xsessionrc"], DESKTOP),
    ".npmrc": "npm runs (its config names programs and Node options)",
    ".yarnrc": "yarn runs (its config names programs)",
    ".yarnrc.yml": "yarn runs (its config names the yarn to run)",
    **dict.fromkeys([".vimrc", ".gvimrc", ".exrc"], "Vim starts"),
    ".emacs": "Emacs starts",
    ".tmux.conf": "tmux starts",
    ".screenrc": "screen starts",
    ".gdbinit": "gdb starts",
    ".lldbinit": "lldb starts",
    ".psqlrc": "psql starts",
    ".sqliterc": "sqlite3 starts",
    ".irbrc": "Ruby's irb starts",
    ".pryrc": "Ruby's pry starts",
    ".rprofile": "R starts",
    ".mailcap": "a program opens a file by its type (mailcap names the program)",
    ".lessfilter": "less opens a file (lesspipe runs it)",
}
#: Folders (any depth) whose every file a program the person runs next may execute.
STARTUP_FOLDERS = {
    ".agents": STARTUP_CODE,
    ".ipython": "IPython starts (profile startup files and config)",
    ".jupyter": "Jupyter starts (its config)",
    ".husky": "git commits (husky hooks)",
    ".githooks": "git runs its hooks (a hooks folder)",
    ".hg": "Mercurial runs (the repository's hgrc names hooks)",
    ".ssh": "ssh runs (its config names programs; its keys let others in)",
    ".gnupg": "gpg runs (its config names programs)",
    ".vim": "Vim starts (its plugins)",
    ".emacs.d": "Emacs starts",
}
#: Folders by their path (any depth, as in a home folder) whose every file is start-up code.
STARTUP_PATHS = {
    (".config", "git"): "git runs (its global config and attributes name programs)",
    (".config", "autostart"): DESKTOP + " (autostart)",
    (".config", "systemd"): "systemd starts the person's services (user units)",
    (".config", "environment.d"): "the person's services start (their environment)",
    (".config", "fish"): SHELL + " (fish)",
    (".config", "xonsh"): SHELL + " (xonsh)",
    (".config", "nushell"): SHELL + " (nushell)",
    (".config", "powershell"): SHELL + " (PowerShell)",
    (".config", "direnv"): "the shell enters a folder with an .envrc (direnv)",
    (".config", "nvim"): "Neovim starts",
    (".config", "tmux"): "tmux starts",
    (".local", "bin"): "a command is run by its name (this folder is on PATH)",
    (".local", "share", "applications"): "the desktop opens a file or launcher (.desktop)",
    ("share", "jupyter"): "Jupyter starts (its kernel specs and extensions)",
    ("etc", "jupyter"): "Jupyter starts (its config)",
    (".julia", "config"): "Julia starts",
}
#: Folders of the home folder (when it is the workspace) that are on the PATH.
HOME_PATH_FOLDERS = {"bin"}
#: Names by pattern: Jupyter and IPython config files, read from the folder they start in.
STARTUP_PATTERN = re.compile(r"(?:jupyter|ipython)(?:_[a-z0-9]+)*_config\.(?:py|json)")
#: Folders holding Python packages: a `.pth` file there runs at every Python start.
SITE_FOLDERS = {"site-packages", "dist-packages"}


def _parts(ws: Workspace, path: str | os.PathLike[str] | None) -> list[tuple[str, ...]]:
    """The lowercased components of `path` below the root: as given, and as resolved."""
    text = os.fspath(path) if path not in (None, "") else "."
    given = Path(text).expanduser()
    lexical = Path(os.path.normpath(given if given.is_absolute() else ws.root / given))
    found = [lexical]
    try:
        found.append(ws.resolve(text))
    except ToolError:
        pass
    out = []
    for full in found:
        try:
            rel = full.relative_to(ws.root)
        except ValueError:
            continue
        out.append(tuple(p.lower().rstrip(". ") for p in PurePosixPath(rel.as_posix()).parts))
    return out


def check_writable(ws: Workspace, path: str | os.PathLike[str], target: Path) -> None:
    """Raise `ToolError` when `path` (resolved to `target`) is inside a `.git` folder."""
    candidates = _parts(ws, path) + _parts(ws, target)
    if any(".git" in parts for parts in candidates):
        raise ToolError(
            f'"{path}" is inside a .git folder (or is one): the file tools never write there, '
            "because git runs programs named in a repository's config and hooks. Change "
            "repository settings yourself, outside the agent."
        )


def startup_code(ws: Workspace, path: str | os.PathLike[str] | None) -> str | None:
    """Why writing `path` needs a person's yes every time, or None for an ordinary file."""
    for parts in _parts(ws, path):
        why = _startup_why(ws, parts)
        if why is not None:
            prefix = "" if why == STARTUP_CODE else "this file can run code when "
            return f"{os.fspath(path or '.')}: {prefix}{why}"
    return None


def _startup_why(ws: Workspace, parts: tuple[str, ...]) -> str | None:
    if not parts:
        return None
    name = parts[-1]
    for folder in parts[:-1]:
        if folder in STARTUP_FOLDERS:
            return STARTUP_FOLDERS[folder]
    if name in STARTUP_NAMES or name in STARTUP_FOLDERS:
        return STARTUP_NAMES.get(name) or STARTUP_FOLDERS[name]
    for place, why in STARTUP_PATHS.items():
        if _holds(parts, place):
            return why
    if STARTUP_PATTERN.fullmatch(name):
        return "Jupyter or IPython starts in this folder (its config)"
    if name.endswith(".pth") and SITE_FOLDERS.intersection(parts[:-1]):
        return "Python starts (a .pth file in site-packages)"
    if len(parts) >= 3 and parts[-2] in ("bin", "scripts"):
        if (ws.root.joinpath(*parts[:-2]) / "pyvenv.cfg").exists():
            return "this virtual environment is used (its bin folder)"
    if parts[0] in HOME_PATH_FOLDERS and ws.root == Path.home().resolve():
        return "a command is run by its name (the home folder's bin is on PATH)"
    hooks = _hooks_folder(ws)
    if hooks is not None and parts[: len(hooks)] == hooks and len(parts) > len(hooks):
        return "git runs its hooks (the folder core.hooksPath names)"
    return None


def _holds(parts: tuple[str, ...], place: tuple[str, ...]) -> bool:
    """Whether `place` (consecutive folder names) is in `parts`: the path is that folder
    or inside it."""
    size = len(place)
    return any(parts[i : i + size] == place for i in range(len(parts) - size + 1))


def _hooks_folder(ws: Workspace) -> tuple[str, ...] | None:
    """The lowercased parts of the folder the repository's `core.hooksPath` names, when it
    is inside the workspace (git would run the hooks there on the next commit)."""
    try:
        # git_command (its regexes, Repository) only once git runs: not on a turn's path
        from elelem_kernel.tools import git_command

        repo = git_command.locate(ws.root)
        entries = git_command.repository_entries(repo) if repo is not None else []
    except (ToolError, OSError, subprocess.SubprocessError):
        return None
    values = [value for key, value in entries if key.lower() == "core.hookspath" and value]
    if not values or repo is None:
        return None
    folder = (repo.tree / os.path.expanduser(values[-1])).resolve()
    if not folder.is_relative_to(ws.root) or folder == ws.root:
        return None
    return tuple(p.lower() for p in folder.relative_to(ws.root).parts)
