"""The one parser of `elelem-kernel`: every subcommand, and the flags they share.

`model_flags` (`-p/--provider`, `--model`, `-o/--option`, `--mode`) is the parent of every
command that runs a model: ask, chat, review (no `--mode`: a review is always read-only)
and acp. Those and the other flags of a turn (`--allow`, `--system-prompt`, `--budget`, a
review's `--focus` and `--severity`) are declared once, for this parser and the `%%elelem`
magic, in `assembly/turn_flags.py`. Building the parser imports nothing heavy.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from elelem_kernel.agent.budget import EXIT_CODE
from elelem_kernel.agent.commands import TURN_COMMANDS
from elelem_kernel.assembly.turn_flags import MODEL, add_flags
from elelem_kernel.findings import FORMATS, SEVERITIES
from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME

DESCRIPTION = """\
An agent harness for Jupyter and the terminal. The agent calls a model, runs the tools it
asks for in this folder (files, shell, Python), and repeats until the model answers.
With no key configured the offline demo model answers, so everything can be tried."""

EPILOG = """\
examples:
  elelem-kernel ask "what is in this folder?"
  git diff | elelem-kernel ask -p anthropic "review this change"
  elelem-kernel ask --json -p openai --model gpt-4.1 "list the notebooks" > blocks.jsonl
  elelem-kernel chat --mode verify
  elelem-kernel install --sys-prefix       # the Elelem kernel for JupyterLab
  elelem-kernel trust                      # let this repository's plugins load
  elelem-kernel ask --budget 0.50 "fix the failing test"     # stops before passing $0.50
exit codes: 0 done, 1 error, 2 bad usage, 3 stopped by --budget (or ELELEM_BUDGET) before
passing it, 130 interrupted
providers and keys: ANTHROPIC_API_KEY, OPENAI_API_KEY (+ OPENAI_BASE_URL for any
OpenAI-compatible server), OLLAMA_HOST; ELELEM_PROVIDER, ELELEM_MODEL, ELELEM_OPTIONS
(name=value,name=value) and ELELEM_BUDGET set defaults; -p llm --model ID runs any model of simonw/llm."""

#: The environment a turn of `ask` and `chat` reads, for their help.
SESSION_ENVIRONMENT = """\
environment: ELELEM_PROVIDER, ELELEM_MODEL and ELELEM_OPTIONS (name=value,name=value) are the
defaults of -p, --model and -o; ELELEM_MODE the default --mode; ELELEM_ALLOW (write,bash)
tools allowed without asking, as --allow; ELELEM_BUDGET the default --budget.
exit codes: 0 done, 1 error, 2 bad usage, 3 stopped by --budget (or ELELEM_BUDGET) before
passing it, 130 interrupted"""

ASK_EPILOG = f"""\
examples:
  elelem-kernel ask "what is in this folder?"
  git diff | elelem-kernel ask -p anthropic "review this change"
  elelem-kernel ask -p openai -o max_tokens=2000 -o thinking=high "why is this slow?"
  elelem-kernel ask --json --mode plan "list the notebooks" > blocks.jsonl
  elelem-kernel ask --notebook analysis.ipynb "plot the last column"
  elelem-kernel ask --budget 0.50 "fix the failing test"
{SESSION_ENVIRONMENT}"""

CHAT_EPILOG = f"""\
examples:
  elelem-kernel chat
  elelem-kernel chat -p anthropic --mode verify --budget 2
  in the chat: /help, /mode plan, /model NAME, /review HEAD~1, /budget 0.50; Ctrl-D ends
{SESSION_ENVIRONMENT}"""

REVIEW_DESCRIPTION = (
    "Review a git change with an agent. TARGET: a range (main..HEAD), a revision "
    "(HEAD~3: changes since it), paths, or nothing (uncommitted changes, else the last commit)."
)

REVIEW_EPILOG = f"""\
examples:
  elelem-kernel review                          # uncommitted changes, else the last commit
  elelem-kernel review main..HEAD -p anthropic --focus security
  elelem-kernel review origin/main...HEAD --format sarif --report review.sarif --fail-on major
exit codes: 0 done (or nothing to review), 1 a finding at or above --fail-on, 2 error (not a
git repository, unknown revision, provider failure), {EXIT_CODE} stopped by --budget (or
ELELEM_BUDGET) before passing it.
environment: ELELEM_PROVIDER, ELELEM_MODEL, ELELEM_OPTIONS and ELELEM_BUDGET set defaults.
deprecated: -o FILE and --output FILE still write the report; write --report FILE
(-o NAME=VALUE is a provider option, as in every command)."""

TRUST_DESCRIPTION = """\
Let a folder's project files run. They can run code: `.agents/plugins/*.py` are imported
into every run in the folder, and MCP configs (`.mcp.json`, `.agents/mcp.json`) start
programs. So, as with direnv or VS Code, they load only in folders you trusted; elsewhere
they are skipped with a line saying how to trust them. Trust is kept in
~/.agents/trusted.json with a hash of those files: when any of them changes (a pull
request adding a plugin), they are skipped again until you trust the folder again.
Your own ~/.agents/plugins/ and installed packages are always trusted."""

TRUST_EPILOG = """\
examples:
  elelem-kernel trust                 # the workspace (git root or this folder), listing its files
  elelem-kernel trust ~/src/project
  elelem-kernel trust --list
  elelem-kernel trust --revoke        # the same folders as `trust`
in a notebook: %elelem /trust (or /trust in the Elelem kernel), /trust --list, /trust --revoke"""

ACP_DESCRIPTION = """\
Run elelem as an ACP (Agent Client Protocol) agent on stdin/stdout, for editors and chats
that host agents: Zed, JetBrains IDEs, Neovim, marimo, jupyter-ai. Configure the client to
start `elelem-kernel` with the arguments `acp`. Each session is kept as a notebook in the
sessions folder ($ELELEM_ACP_SESSIONS, else ~/.local/share/elelem-kernel/acp-sessions), so
a client can load it again, and JupyterLab or `elelem-kernel ask --notebook` continue it."""

ACP_EPILOG = """\
examples:
  elelem-kernel acp
  elelem-kernel acp -p openai --model gpt-4.1 --mode verify -o max_tokens=4000
  elelem-kernel acp --list
environment: ELELEM_PROVIDER, ELELEM_MODEL and ELELEM_OPTIONS set the defaults of -p, --model
and -o; ELELEM_MODE the mode of new sessions; ELELEM_ALLOW tools allowed without asking;
ELELEM_BUDGET a budget for every session."""

INSTALL_DESCRIPTION = f"""\
Install the Elelem kernel (every cell is a prompt) for Jupyter.

Where it goes:
  --user        your per-user Jupyter data folder (default); works without any rights
  --sys-prefix  the current environment (sys.prefix/share/jupyter/kernels): the choice
                for a virtualenv or conda env that also runs JupyterLab
  --prefix P    P/share/jupyter/kernels, for a Jupyter installed elsewhere

The kernel runs with the interpreter running this command:
  {sys.executable}
"""

_RAW = argparse.RawDescriptionHelpFormatter


def model_flags(mode: bool = True) -> argparse.ArgumentParser:
    """The flags every command that runs a model shares: which model, its options, the mode."""
    flags = argparse.ArgumentParser(add_help=False)
    add_flags(flags, [name for name in MODEL if mode or name != "mode"])
    return flags


def _session_flags() -> argparse.ArgumentParser:
    """The flags of a terminal session (`ask`, `chat`) beyond the model's."""
    flags = argparse.ArgumentParser(add_help=False, parents=[model_flags()])
    add_flags(flags, ["system_prompt"])
    flags.add_argument(
        "--yes", action="store_true", help="allow every write and execute call without asking"
    )
    add_flags(flags, ["allow"])
    flags.add_argument(
        "--workspace", metavar="DIR", help="workspace folder (default: the git root or this folder)"
    )
    flags.add_argument(
        "--history",
        choices=["replies", "full"],
        help="what past turns send: replies (default) or full",
    )
    add_flags(flags, ["budget"])
    return flags


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """`elelem-kernel` and its subcommands; with `command` (one of `COMMANDS`), only that one.

    A run of one command reads only its own flags, and declaring all ten subcommands is
    ~4 ms of a ~100 ms `ask` (argparse makes a help formatter per argument), so `main`
    builds the one it runs; the full parser is for the top-level help and usage errors.
    """
    parser = argparse.ArgumentParser(
        prog="elelem-kernel", description=DESCRIPTION, epilog=EPILOG, formatter_class=_RAW
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in COMMANDS.items():
        if command in (None, name):
            add(sub)
    return parser


def _add_chat(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser(
        "chat",
        help="a conversation in the terminal (/ lines are commands, Ctrl-D ends)",
        description="A conversation in the terminal: each line is a turn, / lines are "
        "commands (/help lists them), Ctrl-D ends.",
        epilog=CHAT_EPILOG,
        formatter_class=_RAW,
        parents=[_session_flags()],
    )


def _add_providers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser("providers", help="list the providers, and which one is the default and why")


def _add_policy(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser(
        "policy",
        help="show the site policy in force (elelem_policy.json in /etc/jupyter, ..., or "
        "ELELEM_POLICY) and the file it comes from",
    )


def _add_mcp(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="start the configured MCP servers and show each one's source, state and tools",
    )
    mcp.add_argument(
        "--workspace", metavar="DIR", help="workspace folder (default: the git root or this folder)"
    )
    mcp.add_argument(
        "--no-start", action="store_true", help="only show the configuration; start nothing"
    )


def _add_files(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    files = sub.add_parser(
        "files", help="print files (paths from stdin, else `git ls-files`) in an XML envelope"
    )
    files.add_argument("paths", nargs="*", help="paths (default: stdin lines, else git ls-files)")


def _add_ask(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ask = sub.add_parser(
        "ask",
        help=TURN_COMMANDS["ask"][1],
        description="Run one turn. Piped stdin is appended to the prompt in a fenced block.",
        epilog=ASK_EPILOG,
        formatter_class=_RAW,
        parents=[_session_flags()],
    )
    ask.add_argument(
        "--json",
        action="store_true",
        help="print the block stream as JSON lines (block_start, block_delta, block_stop, turn_end)",
    )
    ask.add_argument(
        "--notebook",
        metavar="NB",
        help="continue the conversation stored in NB.ipynb and append this turn to it",
    )
    ask.add_argument("prompt", nargs="*", help="the prompt (words are joined)")


def _add_review(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "review",
        help=TURN_COMMANDS["review"][1],
        description=REVIEW_DESCRIPTION,
        epilog=REVIEW_EPILOG,
        formatter_class=_RAW,
        parents=[model_flags(mode=False)],
    )
    p.add_argument("target", nargs="*", metavar="TARGET")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="markdown",
        help="report format (default markdown)",
    )
    p.add_argument("--report", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--output", dest="old_output", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--mode", help=argparse.SUPPRESS)  # refused by name, not taken as --model
    p.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        metavar="SEVERITY",
        help="exit 1 if a finding is this bad or worse",
    )
    add_flags(p, ["severity", "focus"])
    p.add_argument("--workspace", "-C", metavar="DIR", help="the repository folder (default: here)")
    p.add_argument("--diff-budget", type=int, default=None, help=argparse.SUPPRESS)
    add_flags(p, ["budget"])
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")


def _add_trust(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trust = sub.add_parser(
        "trust",
        help="let a folder's plugins and MCP configs load (--list, --revoke)",
        description=TRUST_DESCRIPTION,
        epilog=TRUST_EPILOG,
        formatter_class=_RAW,
    )
    trust.add_argument(
        "folder",
        nargs="?",
        metavar="DIR",
        help="the folder to trust (default: the workspace root, i.e. the git root or this "
        "folder, and this folder too when it differs and has project files)",
    )
    which = trust.add_mutually_exclusive_group()
    which.add_argument(
        "--list", action="store_true", help="list the trusted folders and whether they changed"
    )
    which.add_argument(
        "--revoke", action="store_true", help="forget the trust of DIR (default as above)"
    )


def _add_acp(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    acp = sub.add_parser(
        "acp",
        help="serve elelem as an ACP agent on stdio for Zed, JetBrains, jupyter-ai",
        description=ACP_DESCRIPTION,
        epilog=ACP_EPILOG,
        formatter_class=_RAW,
        parents=[model_flags()],
    )
    acp.add_argument("--list", action="store_true", help="list the saved sessions and exit")


def _add_install(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "install",
        help="install the Elelem kernelspec for Jupyter (--user, --sys-prefix, --prefix)",
        description=INSTALL_DESCRIPTION,
        formatter_class=_RAW,
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for the current user (default)")
    where.add_argument(
        "--sys-prefix", action="store_true", help="install into sys.prefix (this environment)"
    )
    where.add_argument("--prefix", metavar="P", help="install into P/share/jupyter/kernels")
    p.add_argument("--name", default=KERNEL_NAME, help=f"kernelspec name (default: {KERNEL_NAME})")
    p.add_argument(
        "--display-name",
        default=None,
        help=f"name shown in the launcher (default: {KERNEL_DISPLAY_NAME})",
    )


#: Each subcommand and what declares it, in the order the help lists them.
COMMANDS: dict[str, Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]] = {
    "ask": _add_ask,
    "chat": _add_chat,
    "review": _add_review,
    "providers": _add_providers,
    "policy": _add_policy,
    "mcp": _add_mcp,
    "files": _add_files,
    "trust": _add_trust,
    "acp": _add_acp,
    "install": _add_install,
}
