"""`elelem-kernel files`: print files in an XML envelope, for pasting into a prompt.

The file tools' rules apply: inside the workspace (git root, else this folder), through no
symlink leading out, regular files only, and a bounded size; binary files are skipped.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Bytes of one file `elelem-kernel files` prints at most; a larger file is skipped.
FILES_MAX_BYTES = 1_000_000


def run(paths: list[str]) -> int:
    """Print `paths` (default: stdin lines, else `git ls-files`); 1 when there are none."""
    listed = paths or _listed()
    if listed is None:
        return 1
    from elelem_kernel.errors import ToolError  # lazy: only this command needs them
    from elelem_kernel.tools.regular_files import open_regular
    from elelem_kernel.tools.workspace import Workspace

    ws, here = Workspace.detect(Path.cwd()), Path.cwd()
    print("<documents>")
    for index, path in enumerate(listed, 1):
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


def _listed() -> list[str] | None:
    """The paths on stdin, else those of `git ls-files`; None (said on stderr) if neither."""
    from elelem_kernel.errors import ToolError  # lazy: only this command needs them
    from elelem_kernel.tools import git_command

    if not sys.stdin.isatty():
        piped = [line.strip() for line in sys.stdin if line.strip()]
        if piped:
            return piped
    try:
        listed = git_command.run(".", "ls-files", "-z")
    except ToolError as e:
        print(f"Error: {e}", file=sys.stderr)
        return None
    except (OSError, subprocess.SubprocessError):
        listed = None
    if listed is None or listed.returncode != 0:
        print("Error: no paths given on stdin and this is not a git repository", file=sys.stderr)
        return None
    return [p for p in listed.stdout.decode("utf-8", "replace").split("\0") if p]
