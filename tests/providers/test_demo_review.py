from __future__ import annotations

import asyncio
import json

from elelem_kernel.providers import demo_review
from elelem_kernel.providers.demo_review import scan

DIFF = """\
diff --git a/stats.py b/stats.py
--- a/stats.py
+++ b/stats.py
@@ -1,2 +1,8 @@
 def mean(values):
-    return 0
+    return sum(values) / len(values)
+
+def load(path, cache={}):
+    try:
+        return cache[path]
+    except:
+        return None
diff --git a/nb.ipynb b/nb.ipynb
notebook: changed cell sources only (outputs and execution counts stripped); line numbers are within each cell
--- a/nb.ipynb
+++ b/nb.ipynb
## cell 1 id=intro (markdown): modified
@@ -1 +1 @@
-# Old
+Divide x / 0 here
## cell 2 id=calc (code): modified
@@ -1,2 +1,2 @@
 x = 1
-y = x
+y = x / 0
"""


def test_scan_locates_findings_by_hunk_and_cell():
    spots = [(s.path, s.line, s.cell_id, s.severity) for s in scan(DIFF)]
    assert spots == [
        ("stats.py", 2, None, "major"),
        ("stats.py", 4, None, "major"),
        ("stats.py", 7, None, "major"),
        ("nb.ipynb", 2, "calc", "blocker"),
    ]
    suggestion = scan(DIFF)[2].suggestion
    assert suggestion == "    except Exception:"


def test_scan_ignores_removed_lines_and_other_languages():
    diff = "+++ b/a.js\n@@ -1 +1 @@\n+x == None\n+++ b/b.py\n@@ -1,1 +1,1 @@\n-x == None\n+x = 1\n"
    assert scan(diff) == []


def run_round(messages, tools):
    events = []
    asyncio.run(demo_review.fetch(messages, tools, events.append))
    return events


TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {}}}
    for n in ("git", "report_finding")
]


def test_the_three_rounds_from_messages_alone():
    prompt = {"role": "user", "content": "Target: x. The diff: `git diff abc def -- stats.py`."}
    first = run_round([prompt], TOOLS)
    (doing,) = [e for e in first if e["type"] == "doing"]
    assert doing["arguments"] == {"args": "diff abc def -- stats.py"}
    assert (
        first[-1]["type"] == "usage"
        and {"type": "stop", "reason": "tool_use", "truncated": False} in first
    )

    history = [
        prompt,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{k: doing[k] for k in ("id", "name", "arguments")}],
        },
        {
            "role": "tool",
            "tool_call_id": doing["id"],
            "content": json.dumps({"ok": True, "output": DIFF}),
        },
    ]
    second = run_round(history, TOOLS)
    findings = [e for e in second if e["type"] == "doing"]
    assert [e["name"] for e in findings] == ["report_finding"] * 4
    assert findings[3]["arguments"]["cell_id"] == "calc"

    history += [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{k: f[k] for k in ("id", "name", "arguments")} for f in findings],
        },
        *[
            {
                "role": "tool",
                "tool_call_id": f["id"],
                "content": json.dumps({"ok": True, "location": "stats.py:2"}),
            }
            for f in findings
        ],
    ]
    third = run_round(history, TOOLS)
    text = "".join(e["text"] for e in third if e["type"] == "saying")
    assert "not a real model" in text and "reported 4 findings" in text
    assert not [e for e in third if e["type"] == "doing"]


def test_nothing_flagged_ends_with_a_plain_answer():
    prompt = {"role": "user", "content": "The diff: `git diff a b`."}
    call = {"id": "d", "name": "git", "arguments": {"args": "diff a b"}}
    history = [
        prompt,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "d",
            "content": json.dumps({"ok": True, "output": "+++ b/a.py\n@@ -1 +1 @@\n+x = 1\n"}),
        },
    ]
    events = run_round(history, TOOLS)
    assert not [e for e in events if e["type"] == "doing"]
    assert "found nothing" in "".join(e["text"] for e in events if e["type"] == "saying")
