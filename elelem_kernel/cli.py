"""The `elelem-kernel` command: ask, chat, review, providers, mcp, files, trust, install.

Everything printed from model, tool or provider text goes through `elelem_kernel.visible`, so a
terminal shows escape sequences instead of obeying them. SIGTERM and SIGHUP end a running
turn as Ctrl-C does (tools' process groups are killed) and exit with 128 + the signal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.agent.approval import Policy
from elelem_kernel.agent.budget import budget_argument, parse
from elelem_kernel.agent.commands import TURN_COMMANDS
from elelem_kernel.agent.toolbox import MODES
from elelem_kernel.cli_signals import EXIT_READER_GONE, ReaderGone, Signals, Stopped
from elelem_kernel.errors import ElelemError
from elelem_kernel.events import EXIT_CODES
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.agent.approval import Approver
    from elelem_kernel.agent.session import Session

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


def _session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-p", "--provider", help="provider name (see `elelem-kernel providers`)")
    parser.add_argument(
        "--model", help="model name (default: the provider's default or ELELEM_MODEL)"
    )
    parser.add_argument(
        "--mode",
        choices=list(MODES),
        help="which tools are offered: plan (read), build (read+write, the default), "
        "verify (read+execute), auto (all, no approvals)",
    )
    parser.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a provider option (repeatable): max_tokens=2000, thinking=high; values are "
        "JSON when they parse, else text; ELELEM_OPTIONS sets defaults",
    )
    parser.add_argument(
        "--system-prompt", metavar="TEXT", help="text put before the default system prompt"
    )
    parser.add_argument(
        "--yes", action="store_true", help="allow every write and execute call without asking"
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="TOOL",
        help="allow this tool without asking (repeatable)",
    )
    parser.add_argument(
        "--workspace", metavar="DIR", help="workspace folder (default: the git root or this folder)"
    )
    parser.add_argument(
        "--history",
        choices=["replies", "full"],
        help="what past turns send: replies (default) or full",
    )
    budget_argument(parser)


def set_budget(session: Session, text: str | None, hint: str) -> None:
    """Put the `--budget` given (if any) in force; `hint` is how this command raises it."""
    session.ledger.hint = hint
    if text is not None:
        session.ledger.set(parse(text), session)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="elelem-kernel",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    ask = sub.add_parser(
        "ask",
        help=TURN_COMMANDS["ask"][1],
        description="Run one turn. Piped stdin is appended to the prompt in a fenced block.",
    )
    _session_options(ask)
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
    chat = sub.add_parser(
        "chat", help="a conversation in the terminal (/ lines are commands, Ctrl-D ends)"
    )
    _session_options(chat)
    sub.add_parser(
        "review",
        help=f"{TURN_COMMANDS['review'][1]} (see `elelem-kernel review --help`)",
        add_help=False,
    )
    sub.add_parser("providers", help="list the providers, and which one is the default and why")
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
    files = sub.add_parser(
        "files", help="print files (paths from stdin, else `git ls-files`) in an XML envelope"
    )
    files.add_argument("paths", nargs="*", help="paths (default: stdin lines, else git ls-files)")
    trust = sub.add_parser(
        "trust",
        help="let a folder's plugins and MCP configs load (--list, --revoke)",
        description=TRUST_DESCRIPTION,
        epilog=TRUST_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    sub.add_parser(
        "acp",
        help="serve elelem as an ACP agent on stdio for Zed, JetBrains, jupyter-ai "
        "(see `elelem-kernel acp --help`)",
        add_help=False,
    )
    sub.add_parser(
        "install",
        help="install the Elelem kernelspec (see `elelem-kernel install --help`)",
        add_help=False,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from elelem_kernel.agent.registry import (
        set_notify,  # lazy: the CLI starts fast; only a run loads the registry
    )

    set_notify(lambda line: print(line, file=sys.stderr))  # skipped project plugins
    if argv and argv[0] == "review":
        from elelem_kernel.review.run import main as review_main  # lazy: only this command needs it

        return review_main(argv[1:])
    if argv and argv[0] == "acp":
        from elelem_kernel.acp import main as acp_main  # lazy: only this command needs it

        return acp_main(argv[1:])
    if argv and argv[0] == "install":
        from elelem_kernel.jupyter.install import (
            main as install_main,  # lazy: only this command needs it
        )

        return install_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "trust" and args.list and args.folder:
        parser.error("trust --list takes no folder")
    with Signals() as signals:
        try:
            code = _run(args, signals)
        except ElelemError as e:
            print(f"Error: {visible(str(e))}", file=sys.stderr)
            code = 1
        except (KeyboardInterrupt, Stopped):  # outside a turn: nothing to end but the program
            code = 130
    if signals.received is None:
        if code is None:
            parser.print_help()
            return 2
        return code
    # The turn has ended and its tools' processes are gone. Worker threads (a python tool
    # still computing) would hold the exit open, and the terminal may be gone (SIGHUP).
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(128 + signals.received)


def _run(args: argparse.Namespace, signals: Signals) -> int | None:
    if args.command == "ask":
        return _ask(args)
    if args.command == "chat":
        return _chat(args, signals)
    if args.command == "providers":
        return _providers()
    if args.command == "files":
        return _files(args.paths)
    if args.command == "trust":
        return _trust(args)
    if args.command == "mcp":
        return _mcp(args.workspace, start=not args.no_start)
    return None


def _new_session(args: argparse.Namespace) -> Session:
    from elelem_kernel.assembly.sessions import new_session  # lazy: only this command needs it
    from elelem_kernel.options import parse_pairs

    options = parse_pairs(args.option)
    approver: Approver | None = None
    if args.yes:
        approver = Policy(yes=True)
    elif sys.stdin.isatty() and sys.stderr.isatty():
        from elelem_kernel.cli_approval import (
            TerminalApprover,  # lazy: only this command needs it
        )

        approver = TerminalApprover()
    session = new_session(
        provider=args.provider,
        model=args.model,
        mode=args.mode,
        workspace=args.workspace,
        approver=approver,
        system_prompt=args.system_prompt,
        history=args.history,
        **options,
    )
    session.allow |= set(args.allow)
    hint = "/budget {amount}" if args.command == "chat" else "--budget {quoted}"
    set_budget(session, args.budget, hint)
    session.propose_cell = _proposer(to_stderr=getattr(args, "json", False))
    if session.notice:
        print(f"elelem: {visible(session.notice)}", file=sys.stderr)
    return session


def _proposer(to_stderr: bool) -> Callable[[str], None]:
    """How `propose_cell` shows a cell here: printed, on stderr with `--json`.

    With `--json` every stdout line is one JSON object; the source is there already, in
    the arguments of the call's `tool_use` block.
    """

    def propose(source: str) -> None:
        if to_stderr:
            print(f"elelem: proposed cell:\n{visible(source)}", file=sys.stderr)
        else:
            print(visible(source))

    return propose


def _ask(args: argparse.Namespace) -> int:
    prompt = " ".join(args.prompt)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped.strip():
            prompt = f"{prompt}\n\n```\n{piped.rstrip()}\n```" if prompt else piped
    if args.notebook:
        from elelem_kernel.cli_notebook import ask_in_notebook  # lazy: only this command needs it
        from elelem_kernel.render.terminal import (  # lazy: only this command needs it
            JsonRenderer,
            TerminalRenderer,
        )

        args.workspace = args.workspace or str(Path(args.notebook).resolve().parent)
        reader = ReaderGone(JsonRenderer() if args.json else TerminalRenderer())
        code = ask_in_notebook(
            Path(args.notebook), prompt, session=_new_session(args), renderer=reader
        )
        return EXIT_READER_GONE if reader.gone else code
    session = _new_session(args)
    from elelem_kernel.render.terminal import (  # lazy: only this command needs it
        JsonRenderer,
        TerminalRenderer,
    )

    reader = ReaderGone(JsonRenderer() if args.json else TerminalRenderer())
    result = session.run(prompt, reader)
    if reader.gone:
        return EXIT_READER_GONE
    return EXIT_CODES.get(result.stop, 0)


def _chat(args: argparse.Namespace, signals: Signals) -> int:
    session = _new_session(args)
    from elelem_kernel.render.terminal import TerminalRenderer  # lazy: only this command needs it

    renderer = TerminalRenderer()
    print(
        f"elelem chat · {session.provider_name} · {session.mode} mode · /help for commands, Ctrl-D to end",
        file=sys.stderr,
    )
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                line = input("› ")
            except EOFError:
                print(file=sys.stderr)
                return 0
            except KeyboardInterrupt:
                print(file=sys.stderr)
                continue
            if not line.strip():
                continue
            if line.split()[0] == "/review":  # a turn, as in the Elelem kernel
                _chat_review(session, line, renderer, loop)
                continue
            if line.startswith("/"):
                print(visible(session.command(line)))
                continue
            session.run(line, renderer, loop=loop)
            if signals.received is not None:
                return 130
    finally:
        session.close(loop)


def _chat_review(
    session: Session,
    line: str,
    renderer: Callable[[dict], None],
    loop: asyncio.AbstractEventLoop,
) -> None:
    """`/review [TARGET ...] [--focus TEXT] [--severity LEVEL]` in the chat: a review turn."""
    import shlex

    from elelem_kernel.review.run import prepare, restore_mode  # lazy: only reviews need it

    parser = argparse.ArgumentParser(prog="/review", add_help=False)
    parser.add_argument("target", nargs="*")
    parser.add_argument("--focus")
    parser.add_argument("--severity")
    try:
        args, unknown = parser.parse_known_args(shlex.split(line)[1:])
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}; use --focus or --severity")
        prompt = prepare(session, args.target or None, focus=args.focus, severity=args.severity)
    except (ValueError, ElelemError) as error:
        print(f"/review: {visible(str(error))}", file=sys.stderr)
        return
    if prompt is None:
        return
    try:
        session.run(prompt, renderer, loop=loop)
    finally:
        restore_mode(session)


def _mcp(workspace: str | None, start: bool) -> int:
    """`elelem-kernel mcp`: start the configured servers, show them, stop them.

    Exit code 1 when a server failed to start or a config file is bad, else 0.
    """
    from elelem_kernel.assembly.sessions import new_session  # lazy: only this command needs them
    from elelem_kernel.mcp import config as mcp_config
    from elelem_kernel.mcp.attachment import report
    from elelem_kernel.mcp.hub import shutdown

    session = new_session("echo", workspace=workspace, mode="auto")
    state = session.mcp
    if state is None:
        print("elelem: no MCP attachment: a plugin replaced the mcp setup", file=sys.stderr)
        return 1
    try:
        notices = asyncio.run(state.refresh(start_all=True)) if start else []
        for notice in notices:
            print(f"elelem: {visible(notice)}", file=sys.stderr)
        print(visible(report(state)))
    finally:
        shutdown()
    _, problems = mcp_config.load(session.workspace)
    return 1 if notices or problems else 0


def _providers() -> int:
    from elelem_kernel.assembly.bundled import catalog  # lazy: only this command needs it

    registry = catalog()
    default, why = registry.default_provider()
    for name in registry.provider_names():
        about = registry.describe_provider(name)
        mark = f"  (default: {why})" if name == default else ""
        print(f"{name}{f'  {about}' if about else ''}{mark}")
    return 0


def _trust(args: argparse.Namespace) -> int:
    from elelem_kernel.agent import trust  # lazy: only this command needs it
    from elelem_kernel.assembly.sessions import find_workspace  # lazy: only this command needs it

    if args.list:
        print(trust.list_text())
        return 0
    if args.folder:
        folders = [Path(args.folder).expanduser()]
    else:
        folders = trust.default_folders(find_workspace())
    if args.revoke:
        print(trust.revoke_text(folders))
        return 0
    try:
        print(trust.trust_text(folders))
    except NotADirectoryError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    return 0


#: Bytes of one file `elelem-kernel files` prints at most; a larger file is skipped.
FILES_MAX_BYTES = 1_000_000


def _files(paths: list[str]) -> int:
    from elelem_kernel.errors import ToolError  # lazy: only this command needs them
    from elelem_kernel.tools import git_command
    from elelem_kernel.tools.regular_files import open_regular
    from elelem_kernel.tools.workspace import Workspace

    if not paths and not sys.stdin.isatty():
        paths = [line.strip() for line in sys.stdin if line.strip()]
    if not paths:
        try:
            listed = git_command.run(".", "ls-files", "-z")
        except ToolError as e:
            print(f"Error: {e}", file=sys.stderr)
            return 1
        except (OSError, subprocess.SubprocessError):
            listed = None
        if listed is None or listed.returncode != 0:
            print(
                "Error: no paths given on stdin and this is not a git repository", file=sys.stderr
            )
            return 1
        paths = [p for p in listed.stdout.decode("utf-8", "replace").split("\0") if p]
    # the file tools' rules: inside the workspace (git root, else this folder), through no
    # symlink leading out, regular files only, and a bounded size
    ws, here = Workspace.detect(Path.cwd()), Path.cwd()
    print("<documents>")
    for index, path in enumerate(paths, 1):
        try:
            with open_regular(ws.resolve(here / path), path) as f:
                data = f.read(FILES_MAX_BYTES + 1)
        except ToolError as e:
            print(f"elelem: skipped {path}: {e}", file=sys.stderr)
            continue
        except OSError as e:
            print(f"elelem: skipped {path}: {e.strerror}", file=sys.stderr)
            continue
        if len(data) > FILES_MAX_BYTES:
            print(f"elelem: skipped {path}: over {FILES_MAX_BYTES:,} bytes", file=sys.stderr)
            continue
        if b"\0" in data[:8192]:
            print(f"elelem: skipped {path}: binary file", file=sys.stderr)
            continue
        text = data.decode("utf-8", errors="replace")
        print(f'<document index="{index}">\n<source>{path}</source>\n<document_content>')
        print(text.rstrip("\n"))
        print("</document_content>\n</document>")
    print("</documents>")
    return 0


if __name__ == "__main__":
    sys.exit(main())
