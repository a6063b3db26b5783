"""Keep secrets out of what is shown and recorded: the one redaction function and the one
pattern of secret names the package uses.

`redact` replaces every known form of a secret in a string, a list or a dict (keys as
well as values: a tool can return `{"<token>": ...}`); `SECRET_NAME` says which names
hold secrets (environment variables, provider options). Tool results go through it with
the environment's secrets (below); an MCP server's results, stderr and errors with its
configured `env` and `headers` values (`forms_of`); a provider's errors with its key.

A tool can print an API key (`env`, `os.environ`, a config file). Before a result goes to
the model, the view and the record, every known secret is replaced with
`[redacted: NAME]` (`[redacted: NAME (base64)]` for an encoded copy), and the password
of every URL with one (`scheme://user:PASSWORD@host`) with `[redacted]`.

Known secrets are the values of environment variables whose name contains KEY, TOKEN,
SECRET, PASS (PASSWORD, PASSWD), CREDENTIAL, AUTH (not AUTHOR) or PRIVATE, and the
passwords in URLs held by any variable. A value counts only if it looks like a credential
(`is_secret`): at least 8 characters, and either 16 or more or a mix of two kinds of
character. Shorter or plain-word values ("subprocess", "localhost") would redact ordinary
text everywhere, and their redaction would not hide them anyway: the text around
`[redacted: NAME]` gives a common word away. Each secret is also looked for reversed, in
hex, percent-encoded and in base64 (standard and URL-safe, padded or not, at any offset
in a longer encoded run, such as an HTTP Basic header). Other encodings, secrets split
across lines or outputs, and secrets that are in no environment variable (a file, a
Python variable) are not caught: docs/security.md says what this does not promise.
"""

from __future__ import annotations

import base64
import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

#: AUTH but not AUTHOR (GIT_AUTHOR_NAME), though AUTHORIZATION and AUTHORITY count;
#: TOKEN but not TOKENS (`max_tokens` counts tokens, it holds none).
SECRET_NAME = re.compile(r"(?i)(key|token(?!s)|secret|pass|credential|auth(?!or(?!i[tz]))|private)")
MIN_LENGTH = 8  #: shorter values are too likely to occur by chance
PLAIN_LENGTH = 16  #: from this length a value of one kind of character is a secret too
#: `://user:password@`: the password ends at the `@`; no `/`, `?`, `#` or space in it. It
#: starts with the literal `://` and its runs stop at `/`: linear time on any text.
URL_PASSWORD = re.compile(r"(://[^\s/?#@:]*:)([^\s/?#@]+)(?=@)")
_KINDS = (str.islower, str.isupper, str.isdigit)


def is_secret(value: str) -> bool:
    """Whether a secret-named variable's value is worth redacting (see the module doc)."""
    if len(value) < MIN_LENGTH:
        return False
    if len(value) >= PLAIN_LENGTH:
        return True
    kinds = {next((i for i, kind in enumerate(_KINDS) if kind(c)), 3) for c in value}
    return len(kinds) >= 2


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Known secret values, longest first, mapped to what they are (a variable's name)."""
    env = os.environ if env is None else env
    found: dict[str, str] = {}
    for name, value in env.items():
        if SECRET_NAME.search(name) and is_secret(value):
            found.setdefault(value, name)
        for match in URL_PASSWORD.finditer(value):
            if is_secret(match[2]):
                found.setdefault(match[2], f"{name} password")
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))


def secret_forms(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every searched form of every known secret, longest first, mapped to its replacement."""
    env = os.environ if env is None else env
    return dict(_forms(tuple(secret_values(env).items())))


@functools.lru_cache(maxsize=8)
def _forms(secrets: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    forms: dict[str, str] = {}
    for value, name in secrets:
        forms.setdefault(value, f"[redacted: {name}]")
    for value, name in secrets:
        raw = value.encode("utf-8")
        encoded = {
            "reversed": [value[::-1]],
            "hex": [raw.hex(), raw.hex().upper()],
            "url-encoded": [quote(value, safe="")],
            "base64": _base64_cores(raw),
        }
        for how, texts in encoded.items():
            for text in texts:
                if len(text) >= MIN_LENGTH:
                    forms.setdefault(text, f"[redacted: {name} ({how})]")
    return tuple(sorted(forms.items(), key=lambda item: -len(item[0])))


def _base64_cores(raw: bytes) -> list[str]:
    """The base64 characters that encode `raw` alone, whatever precedes or follows it.

    In a longer encoded run `raw` starts at byte offset 0, 1 or 2 of a 3-byte group; for
    each, the characters that mix in bits of the neighbours are left out (and so padding).
    """
    cores = []
    for offset in range(3):
        text = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = text[(8 * offset + 5) // 6 : 8 * (offset + len(raw)) // 6]
        cores += [core, core.replace("+", "-").replace("/", "_")]
    return cores


def forms_of(values: Iterable[str], replacement: str = "[redacted]") -> dict[str, str]:
    """`values` (known secrets, such as an MCP server's configured env values) as forms
    for `redact`, longest first, each replaced by `replacement`."""
    return {value: replacement for value in sorted(set(values), key=len, reverse=True) if value}


def redact(value: Any, secrets: Mapping[str, str] | None = None) -> Any:
    """`value` (str, list or dict, nested; dict keys too) with secrets and URL passwords
    replaced.

    `secrets` maps each form to its replacement, longest first (`secret_forms`,
    `forms_of`); default: the environment's. Two keys that become the same keep both,
    the later one numbered.
    """
    forms = secret_forms() if secrets is None else secrets
    if isinstance(value, str):
        for form, replacement in forms.items():
            if form in value:
                value = value.replace(form, replacement)
        return URL_PASSWORD.sub(r"\1[redacted]", value) if "://" in value else value
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            key = redact(key, forms)
            unique, n = key, 1
            while unique in out:
                n += 1
                unique = f"{key} ({n})"
            out[unique] = redact(item, forms)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v, forms) for v in value]
    return value
