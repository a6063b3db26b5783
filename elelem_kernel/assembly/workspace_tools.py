"""The "workspace" setup: the tools each module of `tools/` declares, in a session's toolbox.

A module declares its tools (`tools/declaration.py`); this collects them, in the order
they are offered, and puts them into a session's toolbox with the session's tool context. A plugin
replaces or extends any of them by adding a tool under the same name.
"""

from __future__ import annotations

from collections.abc import Callable

from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.tools import file_tools, namespace, notebook_tools, search, shell
from elelem_kernel.tools.declaration import Tool, ToolContext

#: What declares the workspace tools, in the order the model is offered them.
DECLARED: tuple[Callable[[ToolContext], tuple[Tool, ...]], ...] = (
    file_tools.reading,
    search.definitions,
    file_tools.writing,
    shell.definitions,
    namespace.definitions,
    notebook_tools.definitions,
)


def add_workspace_tools(toolbox: Toolbox, context: ToolContext) -> None:
    """Register read, list, grep, write, edit, bash, python, variables, notebook_* and
    propose_cell in `toolbox`, each reading `context` (never the session) at call time."""
    for declare in DECLARED:
        for definition in declare(context):
            toolbox.put(definition)
