from __future__ import annotations

from elelem_kernel.render.markdown import highlight, neutralise, to_html

ATTACKS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    '<a href="javascript:alert(1)">x</a>',
    "<svg onload=alert(1)>",
    "<iframe src=javascript:alert(1)>",
]


def test_raw_html_is_escaped():
    for attack in ATTACKS:
        out = to_html(f"before {attack} after\n\n{attack}\n")
        assert "<img" not in out and "<script" not in out and "<svg" not in out
        assert "<iframe" not in out and '<a href="javascript' not in out


def test_harmful_links_are_dropped():
    out = to_html("[x](javascript:alert(1)) ![y](javascript:alert(2))")
    assert "javascript:" not in out


def test_markdown_renders():
    out = to_html("# Title\n\n**bold** and `code <b>`\n\n- a\n- b\n")
    assert "<h1>Title</h1>" in out and "<strong>bold</strong>" in out
    assert "<code>code &lt;b&gt;</code>" in out and "<li>a</li>" in out


def test_code_blocks_are_highlighted_and_escaped():
    out = to_html("```python\ndef f():\n    return '<script>'\n```\n")
    assert "<pre" in out and "&lt;script&gt;" in out and "<script>" not in out
    assert "jp-mirror-editor-keyword-color" in out


def test_highlight_unknown_language_is_plain():
    assert highlight("<b>", "no-such-language") == "&lt;b&gt;"


def test_neutralise_keeps_code_and_breaks_tags():
    text = "hi <img src=x onerror=1> `<b>`\n```\n<script>\n```\n<script>"
    out = neutralise(text)
    assert "&lt;img" in out and "`<b>`" in out and "\n<script>\n" in out
    assert out.endswith("&lt;script>")
