"""elelem-kernel: an agent harness for Jupyter.

    %load_ext elelem_kernel          # then %%elelem cells in any Python notebook
    elelem-kernel install --user     # the Elelem kernel: every cell is a prompt
    elelem-kernel ask "..."          # the same agent on the command line

The public API is re-exported here; importing it is cheap (heavy parts load on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__
from .agent.registry import Config, configure
from .errors import ConfigError, ElelemError, ProviderError, ToolError

if TYPE_CHECKING:
    from .agent.factory import new_session
    from .agent.session import Session, TurnResult
    from .agent.toolbox import Toolbox

__all__ = [
    "Config",
    "ConfigError",
    "ElelemError",
    "ProviderError",
    "Session",
    "ToolError",
    "Toolbox",
    "TurnResult",
    "ask",
    "configure",
    "load_ipython_extension",
    "new_session",
]


def __getattr__(name: str) -> Any:
    if name in ("Session", "TurnResult"):
        from .agent import session

        return getattr(session, name)
    if name == "new_session":
        from .agent.factory import new_session

        return new_session
    if name == "Toolbox":
        from .agent.toolbox import Toolbox

        return Toolbox
    raise AttributeError(f"module 'elelem_kernel' has no attribute {name!r}")


def ask(
    prompt: str, provider: str | None = None, model: str | None = None, **options: Any
) -> TurnResult:
    """Run one turn in a new session and return its result (reply, stop, usage, record).

    Options are those of `new_session` (mode, workspace, system_prompt, ...). Works inside
    a running event loop too (a notebook cell): the turn then runs on a private thread.
    The provider's connections are closed afterwards.
    """
    from .agent.factory import new_session
    from .agent.sync import run_sync

    session = new_session(provider=provider, model=model, **options)
    return run_sync(lambda: session.turn(prompt), close=session.aclose)


def load_ipython_extension(ip: Any) -> None:
    """`%load_ext elelem_kernel`: register the %%elelem magic."""
    from .jupyter.magics import load

    load(ip)
