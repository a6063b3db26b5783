"""Toolsets: the layers a toolbox composes its tools from.

A toolbox's own tools (the workspace's, a plugin's `toolbox.add`) are its bottom layer;
each toolset added on top sees the tools below it and says what the toolbox offers with
it in place: a source adds its tools (`Tools`; an MCP attachment is one whose tools
change as its servers do), a reroute runs some of the tools below another way (an
editor's files and terminal over ACP: `Rerouted`). No layer changes a tool it is handed:
taking a toolset away leaves the tools below it as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Protocol

from elelem_kernel.tools.declaration import Arguments, Tool

ToolFn = Callable[[Arguments], object]
#: What a reroute makes of a tool's own function (kept as its fallback): the one that runs.
Reroute = Callable[[ToolFn], ToolFn]


class Toolset(Protocol):
    """A named layer of a toolbox (`Toolbox.add_toolset`)."""

    @property
    def name(self) -> str:
        """What the layer is, for a person reading `/tools` or a log."""

    def over(self, below: Mapping[str, Tool]) -> dict[str, Tool]:
        """The tools, by name in the order offered, with this layer on `below`."""


class Tools:
    """A source of tools: they are added on top, each replacing one of its name below."""

    def __init__(self, name: str, tools: Iterable[Tool] = ()) -> None:
        self.name = name
        self.tools: dict[str, Tool] = {t.name: t for t in tools}

    def over(self, below: Mapping[str, Tool]) -> dict[str, Tool]:
        out = {n: t for n, t in below.items() if n not in self.tools}
        out.update(self.tools)
        return out


class Rerouted:
    """Runs some tools of the layers below another way: `routes[name](fn)` is the
    function tool `name` runs, made from its own `fn` (which it may fall back to).

    Each tool below is rerouted once, into a new `Tool`: the same tool below gives the
    same rerouted one, so a call resolved before is still one of the tools offered.
    """

    def __init__(self, name: str, routes: Mapping[str, Reroute]) -> None:
        self.name = name
        self.routes = dict(routes)
        self._made: dict[str, tuple[Tool, Tool]] = {}  # name -> (the tool below, rerouted)

    def over(self, below: Mapping[str, Tool]) -> dict[str, Tool]:
        out = dict(below)
        for name, route in self.routes.items():
            tool = below.get(name)
            if tool is None:
                continue
            made = self._made.get(name)
            if made is None or made[0] is not tool:
                made = (tool, replace(tool, fn=route(tool.fn)))
                self._made[name] = made
            out[name] = made[1]
        return out
