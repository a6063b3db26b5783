"""elelem-kernel: an agent harness for Jupyter.

    %load_ext elelem_kernel          # then %%elelem cells in any Python notebook
    elelem-kernel install --user     # the Elelem kernel: every cell is a prompt
    elelem-kernel ask "..."          # the same agent on the command line

The public API is re-exported here: what a plugin author or a script touches. Importing it
is cheap: everything but the registry and the errors loads on first use.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from elelem_kernel._version import __version__ as __version__
from elelem_kernel.agent.registry import Config, configure
from elelem_kernel.errors import ConfigError, ElelemError, ProviderError, ToolError

if _typing.TYPE_CHECKING:
    from elelem_kernel import review
    from elelem_kernel.agent.approval import ApprovalRequest, Approver
    from elelem_kernel.agent.session import Session, TurnResult
    from elelem_kernel.agent.toolbox import Call, Tool, Toolbox
    from elelem_kernel.assembly.sessions import new_session
    from elelem_kernel.events import Provider
    from elelem_kernel.review.report import ReviewResult

#: Public names loaded on first use, and the module each comes from.
_LAZY = {
    "ApprovalRequest": ".agent.approval",
    "Approver": ".agent.approval",
    "Call": ".agent.toolbox",
    "Provider": ".events",
    "ReviewResult": ".review.report",
    "Session": ".agent.session",
    "Tool": ".agent.toolbox",
    "Toolbox": ".agent.toolbox",
    "TurnResult": ".agent.session",
    "new_session": ".assembly.sessions",
}

__all__ = [
    "ApprovalRequest",
    "Approver",
    "Call",
    "Config",
    "ConfigError",
    "ElelemError",
    "Provider",
    "ProviderError",
    "ReviewResult",
    "Session",
    "Tool",
    "ToolError",
    "Toolbox",
    "TurnResult",
    "ask",
    "configure",
    "load_ipython_extension",
    "new_session",
    "review",
]


def __getattr__(name: str) -> _typing.Any:
    if name == "review":  # the subpackage, callable: elelem_kernel.review("HEAD~1")
        return _importlib.import_module(".review", __name__)
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'elelem_kernel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def ask(
    prompt: str, provider: str | None = None, model: str | None = None, **options: _typing.Any
) -> TurnResult:
    """Run one turn in a new session and return its result (reply, stop, usage, record).

    Options are those of `new_session` (mode, workspace, system_prompt, ...). Works inside
    a running event loop too (a notebook cell): the turn then runs on a private thread.
    The provider's connections are closed afterwards.
    """
    # lazy: the face stays cheap to import
    from elelem_kernel.assembly.sessions import new_session
    from elelem_kernel.sync import run_sync

    session = new_session(provider=provider, model=model, **options)
    return run_sync(lambda: session.turn(prompt), close=session.facts.aclose)


def load_ipython_extension(ip: _typing.Any) -> None:
    """`%load_ext elelem_kernel`: register the %%elelem magic."""
    from elelem_kernel.jupyter.magics import load  # lazy: IPython only for %load_ext

    load(ip)
