"""The toolbox: tools the model may call, their schemas, kinds, modes and hooks.

    toolbox = Toolbox()

    @toolbox.add("read", "Read a file", {"path": {"type": "string"}}, required=["path"])
    def read(args):
        return {"content": ...}

A tool takes the validated argument dict and returns a dict; a dict with `error` is a
failure, and so is a `ToolError` it raises (its message alone is the error). Results
reach the model as JSON with `ok` added. Nothing a tool does (raising included) ends the
turn; only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from elelem_kernel.agent.toolset import ToolFn, Tools, Toolset
from elelem_kernel.errors import ConfigError, ToolError
from elelem_kernel.schema_check import fits
from elelem_kernel.sync import resolve
from elelem_kernel.tools.declaration import Arguments, Prepared, Result, Tool

KINDS = ("read", "write", "execute")

#: Which kinds of tool each mode offers.
MODES: dict[str, tuple[str, ...]] = {
    "plan": ("read",),
    "build": ("read", "write"),
    "verify": ("read", "execute"),
    "auto": ("read", "write", "execute"),
}


def check_mode(mode: str) -> str:
    """`mode` itself when it is one of MODES; ConfigError naming the modes otherwise."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
    return mode


@dataclass
class Call:
    """A tool call as the session runs it."""

    id: str
    name: str
    arguments: Arguments
    tool: Tool | None = None
    result: Result = field(default_factory=dict)
    ms: int = 0
    metadata: dict[str, object] | None = None  #: opaque provider data, echoed on the next request
    prepared: Prepared | None = None  #: what `Tool.prepare` read: the preview and its run

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))


#: `hook(call)`, a `def` or an `async def`, before a tool runs; raising refuses the call.
BeforeHook = Callable[[Call], object]
#: `hook(call, result)` after it ran; a dict it returns (or awaits to) replaces the result.
AfterHook = Callable[[Call, Result], object]


def validation_error(schema: dict[str, Any], args: Any) -> str | None:
    """Return a readable message if `args` does not fit `schema`, else None."""
    if not isinstance(args, dict):
        return f"arguments must be a JSON object, got {type(args).__name__}"
    if fits(schema, args):  # the usual case, without importing jsonschema
        return None
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(args), key=str)
    if not errors:
        return None
    parts = []
    for e in errors[:5]:
        where = ".".join(str(p) for p in e.absolute_path)
        parts.append(f"{where}: {e.message}" if where else e.message)
    return "; ".join(parts)


class Toolbox:
    """A registry of tools with modes, aliases and before/after hooks.

    Its own tools (`add`, `put`) are the bottom layer; toolsets added on top
    (`add_toolset`: MCP servers, an editor's files over ACP, a review's tools) compose
    with them into the tools offered (`agent/toolset.py`).
    """

    def __init__(self, toolsets: Iterable[Toolset] = ()) -> None:
        self._own = Tools("own")
        self.toolsets: list[Toolset] = list(toolsets)
        self._before: list[tuple[str | None, BeforeHook]] = []
        self._after: list[tuple[str | None, AfterHook]] = []
        self._sources: list[Callable[[], Any]] = []
        #: Whether tools are described briefly now (a small window; the session decides).
        self.brief: Callable[[], bool] = lambda: False
        #: Why a tool is never offered (the site policy's words), or None; the session sets it.
        self.refuse: Callable[[str], str | None] = _refuse_none

    def add(
        self,
        name: str,
        description: str,
        params: dict[str, dict[str, Any]] | None = None,
        required: Iterable[str] = (),
        aliases: Iterable[str] = (),
        kind: str = "read",
        preview: Callable[[Arguments], str] | None = None,
        sensitive: Callable[[Arguments], str | None] | None = None,
        asks_itself: Callable[[Arguments], bool] | None = None,
    ) -> Callable[[ToolFn], ToolFn]:
        """Register the decorated function as tool `name`; adding a name again replaces it.

        `sensitive(args)` returns why a call must be asked every time (neither "always" nor
        an allowed name covers it; only auto mode skips the question), or None.
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")

        def register(fn: ToolFn) -> ToolFn:
            tool = Tool(
                name,
                description,
                dict(params or {}),
                fn,
                tuple(required),
                tuple(aliases),
                kind,
                preview,
                sensitive,
                asks_itself,
            )
            self.put(tool)
            return fn

        return register

    def put(self, tool: Tool) -> None:
        """Register a ready `tool` (replacing one of the same name), with its aliases."""
        self.remove(tool.name)
        self._own.tools[tool.name] = tool

    def remove(self, name: str) -> None:
        """Forget tool `name` of its own, and so its aliases (no error if it is not there)."""
        self._own.tools.pop(name, None)

    def add_toolset(self, toolset: Toolset) -> Toolset:
        """Compose `toolset` on top of the tools so far (after any added before it)."""
        self.toolsets.append(toolset)
        return toolset

    def remove_toolset(self, toolset: Toolset) -> None:
        """Take `toolset` away: the tools below it are offered as they were."""
        self.toolsets = [t for t in self.toolsets if t is not toolset]

    @property
    def tools(self) -> dict[str, Tool]:
        """Every tool by name, in the order offered: its own, then each toolset's layer."""
        tools: dict[str, Tool] = dict(self._own.tools)
        for toolset in self.toolsets:
            tools = toolset.over(tools)
        return tools

    @property
    def aliases(self) -> dict[str, str]:
        """Each alias of a tool, and the tool's name (a later tool's alias wins)."""
        return _aliases(self.tools)

    def before(self, name: str | None = None) -> Callable[[BeforeHook], BeforeHook]:
        """Register `hook(call)` to run before tool `name` (or every tool); raising refuses."""

        def register(hook: BeforeHook) -> BeforeHook:
            self._before.append((name, hook))
            return hook

        return register

    def after(self, name: str | None = None) -> Callable[[AfterHook], AfterHook]:
        """Register `hook(call, result)` after tool `name`; a dict it returns replaces the result."""

        def register(hook: AfterHook) -> AfterHook:
            self._after.append((name, hook))
            return hook

        return register

    def source(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """Register `fn()` (sync or async) to run before each turn offers tools.

        A source may add or remove tools (MCP servers do) and returns notices, strings
        the turn shows once, such as a server that failed to start.
        """
        self._sources.append(fn)
        return fn

    async def refresh(self) -> list[str]:
        """Run every source; their notices, a failing source's own failure among them."""
        notices: list[str] = []
        for fn in self._sources:
            try:
                found = await resolve(fn())
            except asyncio.CancelledError:
                raise
            except Exception as e:
                found = [
                    f"tool source {getattr(fn, '__qualname__', fn)} failed: {type(e).__name__}: {e}"
                ]
            notices.extend(str(n) for n in found or ())
        return notices

    def get(self, name: str) -> Tool | None:
        """The tool called `name` or by alias `name`."""
        tools = self.tools
        return tools.get(name) or tools.get(_aliases(tools).get(name, ""))

    def offered(self, mode: str = "auto") -> list[Tool]:
        """Tools the mode offers, in the order they were added."""
        kinds = MODES.get(mode, MODES["auto"])
        return [t for t in self.tools.values() if t.kind in kinds and self.refuse(t.name) is None]

    def specs(self, mode: str = "auto") -> list[dict[str, Any]]:
        """The offered tools in OpenAI function format (briefly, when `brief()` says so)."""
        brief = self.brief()
        return [t.spec(brief) for t in self.offered(mode)]

    def resolve(self, call: Call, mode: str = "auto") -> str | None:
        """Attach the tool to `call`; return why it cannot run, or None."""
        tool = self.get(call.name)
        offered = self.offered(mode)
        names = ", ".join(t.name for t in offered) or "(none)"
        if tool is None:
            return f'unknown tool "{call.name}". Available tools: {names}'
        refused = self.refuse(tool.name)
        if refused:
            return f"{refused} Available tools: {names}"
        if tool not in offered:
            return (
                f'tool "{tool.name}" is not available in {mode} mode '
                f"(it is a {tool.kind} tool). Available tools: {names}"
            )
        call.tool = tool
        problem = validation_error(tool.schema, call.arguments)
        if problem:
            return f"invalid arguments for {tool.name}: {problem}. Expected schema: {json.dumps(tool.schema)}"
        return None

    async def prepare(self, call: Call) -> str | None:
        """Let a resolved call's tool read what it acts on before it is approved
        (`Tool.prepare`); why it cannot, or None."""
        tool = call.tool
        if tool is None or tool.prepare is None:
            return None
        try:
            call.prepared = await tool.prepare(call.arguments)
        except asyncio.CancelledError:
            raise
        except ToolError as e:
            return str(e)
        except Exception as e:
            return f"{type(e).__name__}: {e}"
        return None

    async def run(self, call: Call) -> Result:
        """Run a resolved call: before hooks, the tool, after hooks. Never raises but on cancel."""
        tool = call.tool
        assert tool is not None, "resolve() the call first"
        started = time.monotonic()
        try:
            for name, before in self._before:
                if name in (None, tool.name):
                    await resolve(before(call))
        except Exception as e:
            result: Result = {"error": f"refused before running: {e}"}
        else:
            result = await self._invoke(tool, call)
            for name, after in self._after:
                if name in (None, tool.name):
                    try:
                        changed = await resolve(after(call, result))
                    except Exception as e:
                        result = {"error": f"after-hook failed: {type(e).__name__}: {e}"}
                        break
                    if isinstance(changed, dict):
                        result = changed
        call.ms = int((time.monotonic() - started) * 1000)
        call.result = finish(result, call.arguments)
        return call.result

    async def _invoke(self, tool: Tool, call: Call) -> Result:
        try:
            if call.prepared is not None:  # exactly what the person was shown
                value = await call.prepared[1]()
            elif inspect.iscoroutinefunction(tool.fn):
                value = await tool.fn(call.arguments)
            else:
                value = await asyncio.to_thread(tool.fn, call.arguments)
        except asyncio.CancelledError:
            raise
        except ToolError as e:  # the tool said what went wrong, for the model
            return {"error": str(e)}
        except Exception as e:
            return {"error": f"{type(e).__name__}: {e}"}
        if isinstance(value, dict):
            return value
        return {"result": value}


def _aliases(tools: dict[str, Tool]) -> dict[str, str]:
    return {alias: t.name for t in tools.values() for alias in t.aliases}


def _refuse_none(name: str) -> str | None:
    return None


def finish(result: Result, arguments: Arguments | None = None) -> Result:
    """Add `ok` to a tool result; failures also carry the arguments they were given."""
    out = dict(result)
    ok = "error" not in out
    out = {"ok": ok, **{k: v for k, v in out.items() if k != "ok"}}
    if not ok and arguments is not None and "arguments" not in out:
        out["arguments"] = arguments
    return out
