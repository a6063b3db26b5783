"""The `elelem-kernel` command: ask, chat, review, providers, files, install."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .agent.approval import Policy
from .agent.toolbox import MODES
from .errors import ElelemError

if TYPE_CHECKING:
    from .agent.approval import Approver
    from .agent.session import Session

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
providers and keys: ANTHROPIC_API_KEY, OPENAI_API_KEY (+ OPENAI_BASE_URL for any
OpenAI-compatible server), OLLAMA_HOST; ELELEM_PROVIDER and ELELEM_MODEL set defaults."""


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
        help="one turn: prompt in, reply out",
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
        "review", help="review a git change (see `elelem-kernel review --help`)", add_help=False
    )
    sub.add_parser("providers", help="list the providers, and which one is the default and why")
    files = sub.add_parser(
        "files", help="print files (paths from stdin, else `git ls-files`) in an XML envelope"
    )
    files.add_argument("paths", nargs="*", help="paths (default: stdin lines, else git ls-files)")
    sub.add_parser(
        "install",
        help="install the Elelem kernelspec (see `elelem-kernel install --help`)",
        add_help=False,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "review":
        from .review.run import main as review_main  # lazy: only this command needs it

        return review_main(argv[1:])
    if argv and argv[0] == "install":
        from .jupyter.install import main as install_main  # lazy: only this command needs it

        return install_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "ask":
            return _ask(args)
        if args.command == "chat":
            return _chat(args)
        if args.command == "providers":
            return _providers()
        if args.command == "files":
            return _files(args.paths)
    except ElelemError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    parser.print_help()
    return 2


def _new_session(args: argparse.Namespace) -> Session:
    from .agent.factory import new_session  # lazy: only this command needs it

    approver: Approver | None = None
    if args.yes:
        approver = Policy(yes=True)
    elif sys.stdin.isatty() and sys.stderr.isatty():
        from .render.terminal_approval import TerminalApprover  # lazy: only this command needs it

        approver = TerminalApprover()
    session = new_session(
        provider=args.provider,
        model=args.model,
        mode=args.mode,
        workspace=args.workspace,
        approver=approver,
        system_prompt=args.system_prompt,
        history=args.history,
    )
    session.allow |= set(args.allow)
    if session.notice:
        print(f"elelem: {session.notice}", file=sys.stderr)
    return session


def _ask(args: argparse.Namespace) -> int:
    prompt = " ".join(args.prompt)
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped.strip():
            prompt = f"{prompt}\n\n```\n{piped.rstrip()}\n```" if prompt else piped
    if args.notebook:
        from .jupyter.store import ask_in_notebook  # lazy: only this command needs it
        from .render.terminal import JsonRenderer  # lazy: only this command needs it

        args.workspace = args.workspace or str(Path(args.notebook).resolve().parent)
        return ask_in_notebook(
            Path(args.notebook),
            prompt,
            session=_new_session(args),
            renderer=JsonRenderer() if args.json else None,
        )
    session = _new_session(args)
    from .render.terminal import JsonRenderer, TerminalRenderer  # lazy: only this command needs it

    renderer = JsonRenderer() if args.json else TerminalRenderer()
    result = session.run(prompt, renderer)
    if result.stop == "interrupted":
        return 130
    return 1 if result.stop == "error" else 0


def _chat(args: argparse.Namespace) -> int:
    session = _new_session(args)
    from .render.terminal import TerminalRenderer  # lazy: only this command needs it

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
            if line.startswith("/"):
                print(session.command(line))
                continue
            session.run(line, renderer, loop=loop)
    finally:
        session.close(loop)


def _providers() -> int:
    from .agent.registry import default_provider, provider_names  # lazy: only this command needs it

    default, why = default_provider()
    for name in provider_names():
        mark = f"  (default: {why})" if name == default else ""
        print(f"{name}{mark}")
    return 0


def _files(paths: list[str]) -> int:
    if not paths and not sys.stdin.isatty():
        paths = [line.strip() for line in sys.stdin if line.strip()]
    if not paths:
        try:
            listed = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            print(
                "Error: no paths given on stdin and this is not a git repository", file=sys.stderr
            )
            return 1
        paths = listed.stdout.splitlines()
    print("<documents>")
    for index, path in enumerate(paths, 1):
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            print(f"elelem: skipped {path}: {e.strerror}", file=sys.stderr)
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
