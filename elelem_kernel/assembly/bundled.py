"""What ships with the package, registered the same way plugins register theirs.

The providers by module and class (imported when one is made), the "workspace" setup
(the tools of `tools/`) and the "mcp" setup (configured MCP servers and `/mcp`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent import registry
from elelem_kernel.agent.catalog import ProviderCatalog
from elelem_kernel.agent.registry import Config

if TYPE_CHECKING:
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


def catalog() -> ProviderCatalog:
    """The registry with the built-ins in it (loaded once, beneath any plugin's)."""
    registry.load_builtins(register)
    return registry


def _factory(module: str, cls: str) -> Callable[..., Any]:
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
    from elelem_kernel.assembly.workspace_tools import (
        add_workspace_tools,  # lazy: the tools load jsonschema and more
    )

    add_workspace_tools(session.toolbox, session.tool_context)


def _mcp_tools(session: Session) -> None:
    """Configured MCP servers as a tool source of the session's toolbox, and `/mcp`."""
    from elelem_kernel.mcp.attachment import (
        McpTools,  # lazy: MCP's modules load only for a session being set up
    )

    state = McpTools(lambda: session.workspace)
    session.mcp = state
    session.toolbox.add_toolset(state)
    session.toolbox.source(state.refresh)
    session.commands.add(
        "mcp",
        "MCP servers: where configured, state, tools; /mcp restart NAME",
        state.command,
        usage="/mcp [restart NAME]",
    )


def register(config: Config) -> None:
    """Register the built-in providers, default candidates and setups on `config`."""
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
