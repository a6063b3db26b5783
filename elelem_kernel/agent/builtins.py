"""The built-in providers and setups, registered the same way plugins register theirs."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elelem_kernel.agent.registry import Config
    from elelem_kernel.agent.session import Session

#: name -> (module, class) of the providers that ship with the package.
PROVIDERS = {
    "stub": ("elelem_kernel.providers.stub", "StubProvider"),
    "echo": ("elelem_kernel.providers.echo", "EchoProvider"),
    "demo": ("elelem_kernel.providers.demo", "DemoProvider"),
    "anthropic": ("elelem_kernel.providers.anthropic", "AnthropicProvider"),
    "openai": ("elelem_kernel.providers.openai", "OpenAIProvider"),
    "responses": ("elelem_kernel.providers.responses", "ResponsesProvider"),
    "ollama": ("elelem_kernel.providers.ollama", "OllamaProvider"),
    "llm": ("elelem_kernel.providers.llm", "LLMProvider"),
}


def _factory(module: str, cls: str):
    def create(model: str | None = None, **options: Any) -> Any:
        return getattr(importlib.import_module(module), cls)(model=model, **options)

    return create


def _configured(name: str) -> Callable[[], bool]:
    """The provider module's own `configured()` check, imported only when a default is needed."""

    def check() -> bool:
        return bool(importlib.import_module(PROVIDERS[name][0]).configured())

    return check


def _llm_about() -> str:
    from elelem_kernel.providers import llm  # lazy: llm is an optional extra and slow to import

    return llm.about()


def _workspace_tools(session: Session) -> None:
    from elelem_kernel.tools.register import (
        add_workspace_tools,  # lazy: the tools load jsonschema and more
    )

    add_workspace_tools(session)


def _mcp_tools(session: Any) -> None:
    from elelem_kernel.mcp.setup import (
        add_mcp_tools,  # lazy: MCP's modules load only for a session being set up
    )

    add_mcp_tools(session)


def register(config: Config) -> None:
    for name, (module, cls) in PROVIDERS.items():
        config.provider(name, _factory(module, cls))
    config.describe("llm", _llm_about)
    config.default_candidate("anthropic", _configured("anthropic"), "ANTHROPIC_API_KEY is set")
    config.default_candidate(
        "openai", _configured("openai"), "OPENAI_API_KEY or OPENAI_BASE_URL is set"
    )
    config.default_candidate("ollama", _configured("ollama"), "Ollama answers at OLLAMA_HOST")
    config.setup("workspace", _workspace_tools)
    config.setup("mcp", _mcp_tools)
