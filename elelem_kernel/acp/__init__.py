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

INSTALL_HINT = "pip install 'elelem-kernel[acp]'"


def sdk_installed() -> bool:
    """Whether the ACP SDK (`acp`) can be imported, found without importing it."""
    try:
        return importlib.util.find_spec("acp") is not None
    except (ImportError, ValueError):
        return False


def main(args: argparse.Namespace) -> int:
    """`elelem-kernel acp [--list] [-p P] [--model M] [--mode MODE] [-o NAME=VALUE]`.

    `args` come from the command line's one parser (cli/parser.py), whose flags every
    command that runs a model shares.
    """
    if args.list:
        from elelem_kernel.store.acp_sessions import listing_text  # lazy: only this option needs it

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
