"""What the demo model says about each finished tool call (`demo._describe`)."""

from __future__ import annotations

import pytest

from elelem_kernel.providers.demo import _describe

CASES = [
    ({"name": "list"}, {"ok": True, "files": []}, "The workspace is empty."),
    ({"name": "list"}, {"ok": True, "files": ["a"]}, "The workspace has 1 entry: `a`."),
    (
        {"name": "list"},
        {"ok": True, "files": [f"f{i}" for i in range(11)]},
        "The workspace has 11 entries: `f0`, `f1`, `f2`, `f3`, `f4`, `f5`, `f6`, `f7` and 3 more.",
    ),
    (
        {"name": "read", "arguments": {"path": "x.py"}},
        {"ok": True, "content": "1: hello\n2: there", "total_lines": 2},
        "`x.py` has 2 lines; it starts with “hello”.",
    ),
    (
        {"name": "write", "arguments": {"path": "n.md"}},
        {"ok": True, "bytes": 12},
        "I wrote `n.md` (12 bytes).",
    ),
    (
        {"name": "python"},
        {"ok": True, "stdout": "hi\n", "value": "3"},
        "Python printed `hi` and the last expression is `3`.",
    ),
    ({"name": "python"}, {"ok": True}, "Python printed nothing."),
    (
        {"name": "variables"},
        {"ok": True, "variables": {"a": 1, "b": 2}},
        "The namespace holds 2 variables: `a`, `b`.",
    ),
    (
        {"name": "mcp__time__now"},
        {"ok": True, "structured": {"t": 1}},
        'The MCP server **time** answered `now` with: `{"t": 1}`',
    ),
    ({"name": "other"}, {"ok": True, "x": 1}, '`other` returned: {"ok": true, "x": 1}'),
    ({"name": "bash"}, {"ok": False, "error": "declined: no"}, "The `bash` call did not run: no"),
    ({"name": "bash"}, {"ok": False}, "The `bash` call failed: it failed"),
]


@pytest.mark.parametrize(("call", "result", "said"), CASES)
def test_each_call_is_described_in_one_sentence(call, result, said):
    assert _describe(call, result) == said
