"""`elelem-kernel providers`: the providers, and which one is the default and why."""

from __future__ import annotations


def run() -> int:
    """Print one line per provider; the default one says why it is the default."""
    from elelem_kernel.assembly.bundled import catalog  # lazy: only this command needs it

    registry = catalog()

    default, why = registry.default_provider()
    for name in registry.provider_names():
        about = registry.describe_provider(name)
        mark = f"  (default: {why})" if name == default else ""
        print(f"{name}{f'  {about}' if about else ''}{mark}")
    return 0
