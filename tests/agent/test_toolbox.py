"""The toolbox: registration and aliases, modes, validation, hooks, and failure results."""

from __future__ import annotations

import asyncio

from elelem_kernel.agent.toolbox import Call, Toolbox
from elelem_kernel.errors import ToolError


def box() -> Toolbox:
    tools = Toolbox()

    @tools.add(
        "read", "Read a file", {"path": {"type": "string"}}, required=["path"], aliases=["cat"]
    )
    def read(args):
        return {"text": f"contents of {args['path']}"}

    @tools.add("write", "Write a file", {"path": {"type": "string"}}, kind="write")
    def write(args):
        raise OSError("disk full")

    return tools


def run(tools: Toolbox, name: str, arguments: dict, mode: str = "auto") -> dict:
    call = Call("c1", name, arguments)
    problem = tools.resolve(call, mode)
    if problem:
        return {"problem": problem}
    return asyncio.run(tools.run(call))


def test_aliases_modes_and_replacing_a_name():
    tools = box()
    assert tools.get("cat") is tools.get("read")
    assert [t.name for t in tools.offered("plan")] == ["read"]
    assert [t.name for t in tools.offered("build")] == ["read", "write"]
    tools.put(tools.get("write"))  # putting a ready tool again keeps one of it
    assert list(tools.tools) == ["read", "write"]
    tools.remove("read")
    assert tools.get("cat") is None and tools.get("read") is None


def test_a_bad_call_is_told_what_exists_and_what_was_expected():
    tools = box()
    assert (
        'unknown tool "delete". Available tools: read'
        in run(tools, "delete", {}, "plan")["problem"]
    )
    assert "not available in plan mode" in run(tools, "write", {"path": "a"}, "plan")["problem"]
    problem = run(tools, "read", {"path": 3})["problem"]
    assert problem.startswith("invalid arguments for read") and "Expected schema" in problem


def test_results_say_ok_and_a_raising_tool_is_a_failure_with_its_arguments():
    tools = box()
    assert run(tools, "cat", {"path": "a"}) == {"ok": True, "text": "contents of a"}
    failed = run(tools, "write", {"path": "a"})
    assert failed == {"ok": False, "error": "OSError: disk full", "arguments": {"path": "a"}}


def test_a_tool_error_is_the_failure_message_alone_sync_or_async():
    """The one place a tool's `ToolError` becomes a result: the model reads what the tool
    said, not the exception's class name."""
    tools = Toolbox()

    @tools.add("find", "Find a file", {"path": {"type": "string"}})
    def find(args):
        raise ToolError(f'"{args["path"]}" is outside the workspace')

    @tools.add("fetch", "Fetch a file", {"path": {"type": "string"}})
    async def fetch(args):
        raise ToolError("no such file")

    assert run(tools, "find", {"path": "/etc"}) == {
        "ok": False,
        "error": '"/etc" is outside the workspace',
        "arguments": {"path": "/etc"},
    }
    assert run(tools, "fetch", {"path": "x"})["error"] == "no such file"


def test_a_before_hook_refuses_and_an_after_hook_replaces():
    tools = box()

    @tools.before("write")
    def no_writes(call):
        raise PermissionError("read-only today")

    @tools.after("read")
    def shorter(call, result):
        return {"text": result["text"][:8]}

    assert run(tools, "write", {"path": "a"})["error"] == "refused before running: read-only today"
    assert run(tools, "read", {"path": "a"}) == {"ok": True, "text": "contents"}
