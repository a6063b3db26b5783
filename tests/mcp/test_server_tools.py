"""Converting MCP results and naming MCP tools (the SDK's own result types, no server)."""

from __future__ import annotations

import json

from mcp.types import CallToolResult, TextContent, ToolAnnotations

from elelem_kernel.mcp.server_tools import RESULT_CHARS, convert, kind_of, tool_name


def text(value: str) -> TextContent:
    return TextContent(type="text", text=value)


def test_kinds_from_annotations():
    assert kind_of(ToolAnnotations(read_only_hint=True)) == "read"
    assert kind_of(ToolAnnotations(read_only_hint=False, destructive_hint=False)) == "write"
    assert kind_of(ToolAnnotations(destructive_hint=True)) == "execute"
    assert kind_of(ToolAnnotations()) == "execute"
    assert kind_of(None) == "execute"


def test_names_are_safe_for_every_provider():
    assert tool_name("git", "git_log") == "mcp__git__git_log"
    assert tool_name("my-srv", "do.thing/now") == "mcp__my-srv__do_thing_now"
    assert len(tool_name("s", "x" * 100)) == 64


def test_long_text_is_cut_and_says_so():
    result = convert(CallToolResult(content=[text("y" * (RESULT_CHARS + 10))]))
    assert len(result["content"]) < RESULT_CHARS + 200
    assert "10 more characters" in result["content"]


def test_is_error_is_a_failure_and_secrets_are_hidden():
    result = convert(
        CallToolResult(content=[text("bad token tok-999")], is_error=True), ["tok-999"]
    )
    assert result == {"error": "bad token [redacted]"}


def test_structured_content_is_used_unless_too_big():
    small = convert(CallToolResult(content=[text('{"a": 1}')], structured_content={"a": 1}))
    assert small == {"structured": {"a": 1}}
    big = {"rows": ["z" * 100] * (RESULT_CHARS // 50)}
    result = convert(CallToolResult(content=[text(json.dumps(big))], structured_content=big))
    assert "structured" not in result and result["content"].endswith(" more characters]")
