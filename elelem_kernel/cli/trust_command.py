"""`elelem-kernel trust [DIR] [--list | --revoke]`: which folders' project files may run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    """Trust, list or revoke as `args` say; 1 when the folder is not a folder."""
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
