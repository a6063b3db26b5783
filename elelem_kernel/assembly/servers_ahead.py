"""The context windows of the model servers this environment names, asked before a turn.

A session asks a local server for its window before its first request
(`providers/window_ahead.py`). When a turn is coming (a notebook page has linked the
kernel), `ask_windows` asks each server a turn could use ahead, off the turn's path: the
server of the provider a new session would make, and each server an HTTP provider is
pointed at by its base URL variable (`OPENAI_BASE_URL`: a cell's `-p openai`). Nothing is
asked when the window needs no asking (a named window, an official endpoint, the demo),
when plugin files are not loaded yet (a session loads them, and they may choose), or for
a provider whose setting is in error (the turn says so).
"""

from __future__ import annotations

import asyncio
import importlib
import os
from typing import TYPE_CHECKING

from elelem_kernel.agent import registry
from elelem_kernel.agent.context import window_named
from elelem_kernel.agent.policy import Policy, load
from elelem_kernel.assembly.bundled import PROVIDERS, catalog
from elelem_kernel.assembly.sessions import default_choice
from elelem_kernel.options import from_env
from elelem_kernel.providers import window_ahead

if TYPE_CHECKING:
    from elelem_kernel.providers.http import HTTPProvider


def ask_windows() -> int:
    """Ask each server a turn could use now for its window and keep the answers for the
    turns' own questions; how many servers answered."""
    if window_named(from_env()) or registry.plugins_waiting():
        return 0
    try:
        policy = load()
    except Exception:  # a malformed policy: the first prompt reports it
        return 0
    return asyncio.run(_ask_each(_servers(policy)))


def _servers(policy: Policy) -> list[HTTPProvider]:
    """The HTTP providers a turn could use whose window their server has to say: the
    first for each server (the default provider's, then the built-ins' in their order)."""
    from elelem_kernel.providers.http import HTTPProvider  # lazy: httpx, only once linked

    wanted = []
    try:
        wanted.append(default_choice(policy))
    except Exception:  # a setting in error: the first prompt reports it
        pass
    for name, (module, cls) in PROVIDERS.items():
        made = getattr(importlib.import_module(module), cls)
        if issubclass(made, HTTPProvider) and made.base_env and os.environ.get(made.base_env):
            wanted.append((name, None, {}))
    found: dict[str, HTTPProvider] = {}
    env = from_env()
    for name, model, options in wanted:
        try:
            if window_named(policy.options_for(name, options, env)):
                continue
            provider = policy.make_provider(catalog(), name, model, options)
        except Exception:  # not allowed, or a setting in error: its turn says so
            continue
        if isinstance(provider, HTTPProvider) and not provider.official:
            found.setdefault(provider.base_url, provider)
    return list(found.values())


async def _ask_each(providers: list[HTTPProvider]) -> int:
    answered = 0
    for provider in providers:
        try:
            answered += await window_ahead.remember(provider) is not None
        except Exception:  # that turn asks, as without this
            pass
        finally:
            await provider.aclose()
    return answered
