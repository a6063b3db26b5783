"""The person's own data folder for elelem: private files that no notebook carries.

`$XDG_DATA_HOME/elelem-kernel`, else `~/.local/share/elelem-kernel`, created 0700 (it holds
the record-signing secret and saved sessions, which hold whole conversations).
"""

from __future__ import annotations

import os
from pathlib import Path


def data_folder(create: bool = False) -> Path:
    """The folder; with `create`, made (and kept) readable by this user alone."""
    data = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local" / "share")
    folder = Path(data).expanduser() / "elelem-kernel"
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
    return folder
