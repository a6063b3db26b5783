"""`elelem-kernel acp`: elelem as an Agent Client Protocol agent over stdio.

Zed, JetBrains, Neovim, marimo and jupyter-ai's chat (through jupyter-ai-acp-client) start
`elelem-kernel acp` and talk JSON-RPC to it on stdin and stdout. The protocol SDK is the
optional extra `elelem-kernel[acp]`; importing this package does not import it (only
`serve` does), so `elelem_kernel` and `%load_ext` stay as cheap as before.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from elelem_kernel.agent.toolbox import MODES

INSTALL_HINT = "pip install 'elelem-kernel[acp]'"

DESCRIPTION = """\
Run elelem as an ACP (Agent Client Protocol) agent on stdin/stdout, for editors and chats
that host agents: Zed, JetBrains IDEs, Neovim, marimo, jupyter-ai. Configure the client to
start `elelem-kernel` with the arguments `acp`. Each session is kept as a notebook in the
sessions folder ($ELELEM_ACP_SESSIONS, else ~/.local/share/elelem-kernel/acp-sessions), so
a client can load it again, and JupyterLab or `elelem-kernel ask --notebook` continue it."""


def sdk_installed() -> bool:
    """Whether the ACP SDK (`acp`) can be imported, found without importing it."""
    try:
        return importlib.util.find_spec("acp") is not None
    except (ImportError, ValueError):
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="elelem-kernel acp",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--list", action="store_true", help="list the saved sessions and exit")
    parser.add_argument("-p", "--provider", help="provider name (default: as for `ask`)")
    parser.add_argument("--model", help="model name (default: the provider's default)")
    parser.add_argument("--mode", choices=list(MODES), help="mode of new sessions (default build)")
    parser.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a provider option (repeatable), as for `ask`",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """`elelem-kernel acp [--list] [-p P] [--model M] [--mode MODE] [-o NAME=VALUE]`."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.list:
        from elelem_kernel.acp.store import listing_text  # lazy: only this option needs it

        print(listing_text())
        return 0
    if not sdk_installed():
        print(
            "Error: `elelem-kernel acp` needs the Agent Client Protocol SDK "
            f"(PyPI agent-client-protocol), which comes with the acp extra: {INSTALL_HINT}",
            file=sys.stderr,
        )
        return 1
    from elelem_kernel.acp.serve import serve  # lazy: imports the ACP SDK
    from elelem_kernel.options import parse_pairs

    defaults = {"provider": args.provider, "model": args.model, "mode": args.mode}
    defaults.update(parse_pairs(args.option))
    return serve({k: v for k, v in defaults.items() if v is not None})
