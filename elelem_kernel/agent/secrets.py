"""Keep secrets out of tool results, so they reach neither the model nor the notebook.

A tool can print an API key (`env`, `os.environ`, a config file). Before a result goes to
the model, the view and the record, every value of an environment variable whose name
looks secret is replaced with `[redacted: NAME]`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

SECRET_NAME = re.compile(r"(?i)(api_?key|token|secret|password|passwd|credential|auth)")
MIN_LENGTH = 8  #: shorter values are too likely to occur by chance


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret-looking environment values, longest first, mapped to their variable names."""
    env = os.environ if env is None else env
    found = {v: k for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= MIN_LENGTH}
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))


def redact(value: Any, secrets: Mapping[str, str] | None = None) -> Any:
    """`value` (str, list or dict, nested) with every secret value replaced."""
    secrets = secret_values() if secrets is None else secrets
    if not secrets:
        return value
    if isinstance(value, str):
        for secret, name in secrets.items():
            if secret in value:
                value = value.replace(secret, f"[redacted: {name}]")
        return value
    if isinstance(value, dict):
        return {k: redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    return value
