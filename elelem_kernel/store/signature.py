"""Signatures on turn records: proof that this person's own sessions wrote a record.

A notebook is written by whoever shared it, and a turn record's `changes` say what `/undo`
would write: acting on a crafted record would let a shared notebook write any file. So, as
Jupyter does for trusted outputs (`nbformat.sign`), each record this person's sessions
write carries `signature`, an HMAC-SHA256 over its conversation, turn and changes with a
secret kept in the person's data folder (mode 0600). Only a record whose signature
verifies is acted on; any other is shown, never undone.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from elelem_kernel.store.data_folder import data_folder

SECRET_NAME = "record-secret"
SECRET_BYTES = 32
PREFIX = "hmac-sha256:"


def secret_path() -> Path:
    """Where the secret is kept."""
    return data_folder() / SECRET_NAME


def _secret() -> bytes:
    """The person's secret, made on first use (0600, in a 0700 folder)."""
    path = secret_path()
    try:
        found = path.read_bytes()
    except FileNotFoundError:
        found = b""
    if len(found) >= SECRET_BYTES:
        return found
    data_folder(create=True)
    made = secrets.token_hex(SECRET_BYTES).encode("ascii")
    partial = path.with_name(f".{SECRET_NAME}.{os.getpid()}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(made)
    try:
        os.link(partial, path)  # the first writer wins: a racing process reads its secret
    except FileExistsError:
        if len(path.read_bytes()) < SECRET_BYTES:  # a broken one: replace it
            os.replace(partial, path)
            return made
        return path.read_bytes()
    finally:
        partial.unlink(missing_ok=True)
    return made


def _message(record: Mapping[str, object]) -> bytes:
    signed = {
        "conversation": record.get("conversation"),
        "turn": record.get("turn"),
        "changes": record.get("changes"),
    }
    return json.dumps(signed, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()


def sign(record: Mapping[str, object]) -> str:
    """The signature for `record` as it is now."""
    return PREFIX + hmac.new(_secret(), _message(record), hashlib.sha256).hexdigest()


def verified(record: Mapping[str, object]) -> bool:
    """Whether `record` carries this person's signature over what it holds now."""
    given = record.get("signature")
    if not isinstance(given, str) or not given.startswith(PREFIX):
        return False
    try:
        return hmac.compare_digest(given, sign(record))
    except (OSError, TypeError, ValueError):
        return False
