"""Sessions built from the registry: the provider resolved, every setup run.

The registry knows providers and setups, the session knows the turn loop; this module is
the one place that puts them together, so neither has to import the other's builder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from elelem_kernel.agent import registry
from elelem_kernel.agent.approval import Approver
from elelem_kernel.agent.front import Front
from elelem_kernel.agent.policy import Policy, load
from elelem_kernel.agent.session import Session
from elelem_kernel.assembly.bundled import catalog
from elelem_kernel.options import from_env
from elelem_kernel.tools.workspace import find_root


def find_workspace(folder: Path | str | None = None) -> Path:
    """The workspace root: the enclosing git repository's root, else `folder` itself."""
    return find_root(folder or Path.cwd())


def new_session(
    provider: str | None = None,
    model: str | None = None,
    mode: str | None = None,
    workspace: Path | str | None = None,
    namespace: dict[str, object] | None = None,
    approver: Approver | None = None,
    system_prompt: str | None = None,
    history: str | None = None,
    policy: Policy | None = None,
    allow: Iterable[str] = (),
    front: Front | None = None,
    provider_options: Mapping[str, object] | None = None,
    **options: Any,
) -> Session:
    """A ready session: provider resolved, every setup run (the tools among them).

    `ELELEM_MODE` is the default mode and `ELELEM_ALLOW` (`write,bash`), like `allow`,
    names tools that run without asking: for headless runs, where nobody can be asked. The site policy
    (`agent/policy.py`) gives the defaults the person did not choose and checks the rest;
    a malformed policy file is a ConfigError naming it. `policy`: another one (the `mcp`
    command's session runs no model, so it passes an empty one; the servers are still
    the policy's, `mcp/config.py` reads it). `front`: how the front offers cells, which
    notebook is open in it, where the notice of a default provider goes and what its turns
    bring (`agent/front.py`); `approver` is for a session made without one. The session
    comes back finished: nobody sets its attributes afterwards. The provider's options
    are `provider_options` (parsed `-o NAME=VALUE`s) with `options` (keywords) on top.
    """
    policy = load() if policy is None else policy
    providers = catalog()
    given = {**(provider_options or {}), **options}
    provider, model, given, notice = _defaults(policy, providers, provider, model, given)
    instance = policy.make_provider(providers, provider, model, given)
    session = Session(
        instance,
        providers=providers,
        provider_name=provider,
        model=model,
        mode=mode or os.environ.get("ELELEM_MODE") or policy.first_mode("build"),
        history=history or os.environ.get("ELELEM_HISTORY") or "replies",
        system_prompt=system_prompt,
        workspace=find_workspace(workspace),
        namespace=namespace,
        approver=approver,
        allow=[*allow, *os.environ.get("ELELEM_ALLOW", "").replace(",", " ").split()],
        policy=policy,
        front=front,
    )
    session.facts.provider_options[provider] = policy.options_for(provider, given, from_env())
    registry.run_setups(session, dict(registry.CONFIG.setups))
    if notice and front is not None:
        front.notice(notice)
    return session


def default_choice(policy: Policy) -> tuple[str, str | None, dict[str, object]]:
    """The provider, model and options a session made now with none named would start
    with (`policy`'s defaults, else the registry's)."""
    provider, model, options, _ = _defaults(policy, catalog(), None, None, {})
    return provider, model, options


def _defaults(
    policy: Policy,
    providers: Any,
    provider: str | None,
    model: str | None,
    options: dict[str, object],
) -> tuple[str, str | None, dict[str, object], str | None]:
    """The provider, model and options to start with: the person's, else the policy's
    defaults (its model and base URL go with its provider), else the registry's default."""
    notice = None
    wanted = policy.default("provider")
    if provider is None and wanted and not os.environ.get("ELELEM_PROVIDER"):
        provider = wanted
    if provider is None:
        provider, why = providers.default_provider()
        if provider == "demo":
            notice = why
    if wanted in (None, provider):
        if model is None and not os.environ.get("ELELEM_MODEL"):
            model = policy.default("model")
        base_url = policy.default("base_url")
        if base_url and "base_url" not in options:
            options = {**options, "base_url": base_url}
    return provider, model, options, notice
