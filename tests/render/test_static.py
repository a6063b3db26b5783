from __future__ import annotations

import json
import re

from elelem_kernel.render.static import bundle

XSS = "<img src=x onerror=alert(1)> <script>alert(2)</script>"


def record(**changes):
    base = {
        "v": 1,
        "conversation": "c1",
        "turn": "t1",
        "cell": None,
        "provider": "demo",
        "model": "demo-1",
        "prompt": "hi",
        "reply": f"Done {XSS}",
        "rounds": [
            {
                "thinking": f"think {XSS}",
                "text": "Looking.",
                "calls": [
                    {
                        "id": "a",
                        "name": "shell",
                        "arguments": {"command": f"echo '{XSS}'"},
                        "result": json.dumps({"ok": True, "output": XSS}),
                        "ok": True,
                        "ms": 120,
                    },
                    {
                        "id": "b",
                        "name": "write",
                        "arguments": {"path": "x.txt"},
                        "result": json.dumps({"ok": False, "error": "declined by the person"}),
                        "ok": False,
                        "ms": 0,
                    },
                ],
            },
            {"thinking": "", "text": f"Done {XSS}", "calls": []},
        ],
        "usage": {"input": 1234, "output": 56, "cache_read": 7},
        "stop": "end_turn",
        "started": "2026-01-01T00:00:00+00:00",
        "ms": 2300,
    }
    base.update(changes)
    return base


def test_bundle_shapes():
    rec = record()
    data, metadata = bundle(rec)
    assert set(data) == {"text/html", "text/markdown", "text/plain"}
    assert metadata == {"elelem": rec}
    json.dumps(metadata)


def test_nothing_from_model_or_tools_is_live_html():
    data, _ = bundle(record())
    html = data["text/html"]
    assert "<img" not in html and "<script" not in html and "onerror=alert(1)>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    md = re.sub(r"`[^`]*`", "", data["text/markdown"])  # code spans show tags as text
    assert "<img" not in md and "<script" not in md


def test_html_has_cards_thinking_and_footer():
    html = bundle(record())[0]["text/html"]
    assert html.count("<details") >= 5  # thinking, 2 cards, 2 argument sections
    assert "shell" in html and "✓ ok" in html and "⊘ declined" in html and "120 ms" in html
    assert "in 1,234 · out 56 · cached 7 · 2.3 s · 2 rounds · done · demo/demo-1" in html


def test_endings_are_marked():
    html = bundle(record(stop="interrupted"))[0]["text/html"]
    assert "interrupted: the reply above is partial" in html
    data, _ = bundle(record(stop="error", error="boom <b>", rounds=[]))
    assert "Error: boom &lt;b&gt;" in data["text/html"]
    assert "Error: boom <b>" in data["text/plain"]


def test_long_results_are_bounded_and_expandable():
    big = "x" * 10_000
    rec = record()
    rec["rounds"][0]["calls"][0]["result"] = json.dumps({"ok": True, "output": big})
    html = bundle(rec)[0]["text/html"]
    assert "[... 8000 more characters]</pre>" in html and ">show all</summary>" in html


def test_cost_is_shown_when_carried():
    rec = record()
    rec["usage"]["cost"] = 0.0123
    assert "$0.0123" in bundle(rec)[0]["text/plain"]


def test_reply_only_record():
    data, _ = bundle({"reply": "just **this**", "stop": "end_turn"})
    assert "<strong>this</strong>" in data["text/html"]


def test_review_findings_are_listed_and_escaped():
    rec = record(
        findings=[
            {
                "path": "a.py",
                "line": 3,
                "severity": "major",
                "title": "divides by zero <b>",
                "body": "x / 0 <script>",
                "suggestion": "check y",
            },
        ]
    )
    data, _ = bundle(rec)
    assert "a.py:3" in data["text/html"] and "divides by zero &lt;b&gt;" in data["text/html"]
    assert "<script" not in data["text/html"] and "check y" in data["text/html"]
    assert "a.py:3" in data["text/markdown"] and "x / 0 &lt;script>" in data["text/markdown"]
    assert "- **major** a.py:3: divides by zero <b>" in data["text/plain"]
    assert "no findings" in bundle(record(findings=[]))[0]["text/html"]


def test_cost_unknown_and_free():
    assert "cost unknown" in bundle(record(cost=None, provider="openai"))[0]["text/plain"]
    free = bundle(record(cost=0.0, provider="demo", model="demo"))[0]["text/plain"]
    assert "$" not in free and "cost unknown" not in free
    assert free.rstrip().endswith("· done · demo · free")  # as the README promises
    paid = bundle(record(cost=0.0, provider="openai", model="gpt-4.1"))[0]["text/plain"]
    assert "free" not in paid  # a priced model that used no tokens is not "free"


def test_results_show_text_fields_as_text():
    from elelem_kernel.render.call_text import result_text
    from elelem_kernel.render.cards import result_html

    result = json.dumps(
        {"ok": True, "path": "a.py", "content": "     1\tx = 1\n     2\ty = 2\n", "total_lines": 2}
    )
    text = result_text(result)
    assert text.startswith("path: a.py · total_lines: 2\n") and "\tx = 1\n" in text
    html = result_html(result)
    assert "\\n" not in html and "&quot;content&quot;" not in html
    both = result_text({"ok": True, "stdout": "hi\n", "value": "3"})
    assert "stdout:\nhi" in both and "value:\n3" in both
    assert result_text({"ok": False, "error": "no such file"}) == "no such file"
    assert '"items"' in result_text({"ok": True, "items": [1, 2]})


def test_footer_says_tokens_unknown_when_a_cut_stream_counted_none():
    from elelem_kernel.render.footer import footer_text

    zero = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    assert footer_text(zero, 2300, 1, "interrupted", "openai", "gpt-4.1").startswith(
        "tokens unknown"
    )
    assert footer_text(zero, 10, 1, "end_turn", "echo").startswith("in 0 · out 0")


def test_the_markdown_bundle_of_a_hostile_turn_has_nothing_live():
    from tests.render.test_markdown import HOSTILE, live_parts, renderers

    for attack in HOSTILE:
        for ticks in ("", "`", "``"):
            text = f"{ticks}{attack}{ticks}"
            call = {"id": "a", "name": f"x{text}", "arguments": {"q": text}, "ok": True}
            rec = record(reply=text, rounds=[{"thinking": text, "text": text, "calls": [call]}])
            rec.update(model=text, error=text, stop="error")
            md = bundle(rec)[0]["text/markdown"]
            for render in renderers():
                assert live_parts(render(md)) == [], (text, md)


def test_the_markdown_bundle_of_hostile_findings_has_nothing_live():
    from tests.render.test_markdown import HOSTILE, live_parts, renderers

    for attack in HOSTILE:
        finding = {
            "path": f"a`{attack}.py",
            "line": 3,
            "severity": attack,
            "title": attack,
            "body": attack,
            "code": f"````\n{attack}",
            "suggestion": f"````\n{attack}\n````",
        }
        md = bundle(record(findings=[finding]))[0]["text/markdown"]
        for render in renderers():
            assert live_parts(render(md)) == [], (attack, md)


def test_plain_keeps_the_lines_of_a_calls_code():
    code = "import os\nfor name in os.listdir():\n    print(name)"
    call = {"id": "p", "name": "python", "arguments": {"code": code}, "state": "done", "ms": 3}
    text = bundle(record(rounds=[{"text": "Ran it.", "calls": [call]}]))[0]["text/plain"]
    assert "import os for name" not in text
    assert "    import os\n    for name in os.listdir():\n        print(name)\n" in text


def test_plain_shows_a_long_code_argument_cut_with_the_count_of_lines_left():
    code = "\n".join(f"x{i} = {i}" for i in range(40))
    call = {"id": "p", "name": "python", "arguments": {"code": code}, "state": "done", "ms": 3}
    text = bundle(record(rounds=[{"text": "", "calls": [call]}]))[0]["text/plain"]
    assert "    x11 = 11" in text and "x12 = 12" not in text
    assert "    [... 28 more lines]" in text
