"""`elelem-kernel install`: install the Elelem kernelspec, saying where and what it runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from elelem_kernel.cli.parser import build_parser
from elelem_kernel.jupyter.kernelspec import install
from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME


def run(args: argparse.Namespace) -> int:
    """Install as `args` say (--user, --sys-prefix, --prefix, --name, --display-name)."""
    prefix = sys.prefix if args.sys_prefix else args.prefix
    display_name = args.display_name or (
        KERNEL_DISPLAY_NAME if args.name == KERNEL_NAME else f"{KERNEL_DISPLAY_NAME} ({args.name})"
    )
    try:
        path = install(
            user=prefix is None, prefix=prefix, name=args.name, display_name=display_name
        )
    except OSError as error:
        print(f"elelem-kernel install: {error}", file=sys.stderr)
        print("Try --user, or --sys-prefix inside a virtual environment.", file=sys.stderr)
        return 1
    print(f"Installed the {display_name!r} kernel in {path}")
    print(f"It runs {sys.executable}. Start JupyterLab and pick {display_name!r} in the launcher.")
    return 0


def main(argv: Sequence[str]) -> int:
    """`elelem-kernel install ARGV...` from Python; the exit code."""
    return run(build_parser("install").parse_args(["install", *argv]))
