"""What the person spent today, across every session and front: the per-day budget's count.

One small JSON file in the person's data folder (`spent-today.json`, 0600), updated under
a lock so that kernels running at once add up. It is a guard against accidents, not
billing: a person who can run code can edit it.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from elelem_kernel.store.data_folder import data_folder

FILE_NAME = "spent-today.json"


def path() -> Path:
    return data_folder() / FILE_NAME


def today() -> str:
    return datetime.date.today().isoformat()


def read() -> dict[str, float]:
    """Today's `usd`, `tokens` and `unpriced` turns (zeros for a new day or no file)."""
    try:
        data = json.loads(path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict) or data.get("day") != today():
        data = {}
    return {k: _number(data.get(k)) for k in ("usd", "tokens", "unpriced")}


def add(usd: float, tokens: int, unpriced: int) -> None:
    """Add one turn's spending to today's."""
    with _locked():
        spent = read()
        spent["usd"] += max(usd, 0.0)
        spent["tokens"] += max(tokens, 0)
        spent["unpriced"] += max(unpriced, 0)
        fresh = path().with_name(f".{FILE_NAME}.{os.getpid()}")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"day": today(), **spent}, out)
        os.replace(fresh, path())


@contextmanager
def _locked() -> Iterator[None]:
    folder = data_folder(create=True)
    fd = os.open(folder / f".{FILE_NAME}.lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _number(value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return 0.0
