"""`elelem-kernel acp`: elelem as an Agent Client Protocol agent over stdio.

Zed, JetBrains, Neovim, marimo and jupyter-ai's chat (through jupyter-ai-acp-client) start
`elelem-kernel acp` and talk JSON-RPC to it on stdin and stdout. The agent speaks the
protocol itself (jsonrpc.py, messages.py): it needs no ACP SDK, and importing this package
imports nothing of the agent (only `serve` does), so `elelem_kernel` and `%load_ext` stay
as cheap as before.
"""

from __future__ import annotations

import argparse


def main(args: argparse.Namespace) -> int:
    """`elelem-kernel acp [--list] [-p P] [--model M] [--mode MODE] [-o NAME=VALUE]`.

    `args` come from the command line's one parser (cli/parser.py), whose flags every
    command that runs a model shares.
    """
    if args.list:
        from elelem_kernel.store.acp_sessions import listing_text  # lazy: only this option needs it

        print(listing_text())
        return 0
    from elelem_kernel.acp.serve import serve  # lazy: the agent's protocol, only this command
    from elelem_kernel.options import parse_pairs

    defaults = {"provider": args.provider, "model": args.model, "mode": args.mode}
    defaults.update(parse_pairs(args.option))
    return serve({k: v for k, v in defaults.items() if v is not None})
