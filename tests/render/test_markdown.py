from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

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


def test_neutralise_breaks_tags_in_code_too():
    # Whether backticks or a fence make code depends on the whole document; a wrong guess
    # let HTML through, so code shows `&lt;` in the Markdown copy (the HTML copy is exact).
    text = "hi <img src=x onerror=1> `<b>`\n```\n<script>\n```\n<script>"
    out = neutralise(text)
    assert "&lt;img" in out and "`&lt;b>`" in out and "\n&lt;script>\n" in out
    assert out.endswith("&lt;script>")


# -- the Markdown copy, read by real Markdown renderers that pass raw HTML through ------

HOSTILE = [
    "``<img src=x onerror=alert(1)>`",
    "\\`<script>alert(1)</script>`",
    "[x](`) <img src=x onerror=alert(1)> (`)",
    "[x](/u '\n`') <img src=x onerror=alert(1)> `",
    "- ```\n  x\n  ```\n  <img src=x onerror=alert(1)>\n",
    "  ```\ncode\n```\n<img src=x onerror=alert(1)>\n```",
    "```a`b\n<script>alert(1)</script>\n```",
    "````\n```\n<img src=x onerror=alert(1)>\n````\n<svg onload=alert(1)>",
    "<!-- x --><script>alert(1)</script>",
    '<a href="javascript:alert(1)">x</a>',
    "<javascript:alert(1)>",
    "[x](javascript:alert(1))",
    "[x]( JavaScript:alert(1))",
    "[x](jav&#97;script:alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](vbscript:msgbox(1))",
    "![x](data:image/svg+xml;base64,PHN2Zz4=)",
    "[x](data:text/html,<script>alert(1)</script>)",
    "[r]: javascript:alert(1)\n\n[click][r]",
    "[r]:\n  vbscript:msgbox(1)\n\n[click][r]",
]
SAFE_SCHEMES = {"http", "https", "mailto"}


class _Live(HTMLParser):
    """What a browser would act on in rendered HTML: tags, event handlers, link schemes."""

    def __init__(self):
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "svg", "object", "embed", "style", "form"):
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"{tag} {name}=")
            if name in ("href", "src", "action", "formaction", "xlink:href"):
                seen = re.sub(r"[\x00-\x20\x7f\\]+", "", value or "")
                scheme = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):", seen)
                if scheme and scheme.group(1).lower() not in SAFE_SCHEMES:
                    self.problems.append(f"{tag} {name}={value}")


def live_parts(rendered: str) -> list[str]:
    parser = _Live()
    parser.feed(rendered)
    return parser.problems


def renderers():
    """CommonMark (markdown-it-py) and mistune, both passing raw HTML and every link."""
    import mistune
    from markdown_it import MarkdownIt

    commonmark = MarkdownIt("commonmark", {"html": True})
    commonmark.validateLink = lambda url: True  # a frontend without a link filter
    loose = mistune.create_markdown(escape=False, plugins=["strikethrough", "table"])
    return [commonmark.render, loose]


@pytest.mark.parametrize("attack", HOSTILE)
def test_each_attack_is_live_in_a_renderer_when_not_neutralised(attack):
    assert any(live_parts(render(attack)) for render in renderers())


@pytest.mark.parametrize("ticks", ["", "`", "``", "```", "`x", "\\`"])
@pytest.mark.parametrize("attack", HOSTILE)
def test_the_markdown_copy_has_no_live_html_or_script_links(attack, ticks):
    text = f"{ticks}{attack}{ticks}"
    for render in renderers():
        assert live_parts(render(neutralise(text))) == [], render(neutralise(text))


def test_safe_links_and_plain_text_stay_as_they_are():
    text = "See [docs](https://example.org/a_(b)) or [me](mailto:a@b.c) and [up](../x.md).\n"
    text += "Compare a < b, x <= y and 3 > 2; data: as a word; `code`."
    assert neutralise(text) == text


def test_no_blank_lines_keeps_the_text_and_leaves_no_blank_line():
    import html as html_lib

    from elelem_kernel.render.markdown import no_blank_lines

    source = '<pre><code>def f():\n\n  \n    return 1\n</code></pre>\n\n<p title="a\n\nb">x</p>'
    out = no_blank_lines(source)
    assert html_lib.unescape(out) == html_lib.unescape(source)
    assert all(line.strip() for line in out.splitlines())
