"""What a session and a front ask of the provider registry, as a protocol.

Apart from `agent/registry.py` so that the session, its model and the site policy can name
it without importing the registry (which runs setups on sessions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from elelem_kernel.events import Provider


class ProviderCatalog(Protocol):
    """What a session and a front ask of the registry (this module is one, once the
    composition root loaded the built-ins into it: `assembly.bundled.catalog()`)."""

    def create_with_env(
        self, name: str, model: str | None, chosen: Mapping[str, object]
    ) -> Provider:
        """Provider `name` made with ELELEM_OPTIONS under `chosen`."""

    def create_provider(self, name: str, model: str | None = None, **options: Any) -> Provider:
        """A new provider `name`, or ConfigError naming the available ones."""

    def provider_factory(self, name: str) -> object:
        """What makes provider `name` now (a provider made by another is made anew)."""

    def provider_names(self) -> list[str]:
        """Every provider that `-p NAME` can resolve."""

    def describe_provider(self, name: str) -> str:
        """The one-line description a plugin gave provider `name`, or ""."""

    def default_provider(self) -> tuple[str, str]:
        """The provider to use when none is named, and why it was chosen."""
