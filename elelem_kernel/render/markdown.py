"""Safe Markdown → HTML for text that comes from a model or a tool.

Raw HTML in the source is escaped, never passed through, and links with scripting
protocols (`javascript:` ...) are neutralised, so the result can go into a trusted
notebook output or an ipywidgets `HTML` value. Code blocks are highlighted with inline
styles that follow the JupyterLab theme (with fallbacks for other frontends).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any


def themed(prop: str, plain: str, theme: str) -> str:
    """`prop: plain; prop: theme`: the plain value survives sanitizers that drop `var()`."""
    return f"{prop}: {plain}; {prop}: {theme}"


#: Token kinds → (mid-tone colour readable on light and dark, JupyterLab editor variable).
COLOURS = {
    "Keyword": ("#a626a4", "--jp-mirror-editor-keyword-color"),
    "Name.Builtin": ("#0e8a94", "--jp-mirror-editor-builtin-color"),
    "Name.Function": ("#3a7bd5", "--jp-mirror-editor-def-color"),
    "Name.Class": ("#3a7bd5", "--jp-mirror-editor-def-color"),
    "Name.Decorator": ("#a626a4", "--jp-mirror-editor-meta-color"),
    "Literal.String": ("#2e9e44", "--jp-mirror-editor-string-color"),
    "Literal.Number": ("#c2570c", "--jp-mirror-editor-number-color"),
    "Comment": ("#8a8a8a", "--jp-mirror-editor-comment-color"),
    "Operator": ("#a626a4", "--jp-mirror-editor-operator-color"),
}

CODE_STYLE = (
    themed("background", "rgba(127,127,127,.12)", "var(--jp-layout-color2)")
    + "; padding: 6px 8px; border-radius: 4px; overflow-x: auto; margin: 4px 0; "
    + themed("font-family", "monospace", "var(--jp-code-font-family)")
    + "; font-size: 0.92em; white-space: pre; line-height: 1.4"
)

_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def escape(text: str) -> str:
    """`text` escaped for HTML content and attribute values."""
    return html.escape(text, quote=True)


def highlight(code: str, language: str | None = None) -> str:
    """`code` as escaped HTML with coloured spans; plain escaped text if unknown."""
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments comes with IPython
        return escape(code)
    try:
        lexer = get_lexer_by_name(language or "text", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return escape(code)
    runs: list[list] = []  # [colour, text]: neighbouring tokens of one colour share a span
    for kind, value in lexer.get_tokens(code):
        colour = _colour(kind) if value.strip() else (runs[-1][0] if runs else None)
        if runs and runs[-1][0] == colour:
            runs[-1][1] += value
        else:
            runs.append([colour, value])
    return "".join(
        f'<span style="{_colour_style(colour)}">{escape(text)}</span>' if colour else escape(text)
        for colour, text in runs
    )


def code_block(code: str, language: str | None = None) -> str:
    """A styled `<pre>` block holding `code`, highlighted when the language is known."""
    return f'<pre style="{CODE_STYLE}"><code>{highlight(code, language)}</code></pre>\n'


def to_html(text: str) -> str:
    """Markdown `text` as safe HTML (raw HTML escaped, harmful links removed)."""
    if not text:
        return ""
    convert = _converter()
    if convert is None:
        return f'<div style="white-space: pre-wrap">{escape(text)}</div>'
    return convert(text)


def neutralise(text: str) -> str:
    """Markdown `text` with raw HTML tags outside code made inert (`<` → `&lt;`).

    For the `text/markdown` copy of a turn: frontends render Markdown with its raw HTML,
    so a reply holding `<img onerror=...>` must not reach them as a tag.
    """
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            out.append(line)
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            out.append(line)
        else:
            out.append(_outside_code_spans(line))
    return "".join(out)


def _outside_code_spans(line: str) -> str:
    parts = re.split(r"(`+[^`]*`+)", line)
    return "".join(p if p.startswith("`") else _TAG.sub("&lt;", p) for p in parts)


def _colour_style(colour: tuple[str, str]) -> str:
    plain, variable = colour
    return themed("color", plain, f"var({variable})")


def _colour(kind: Any) -> tuple[str, str] | None:
    while kind is not None and len(kind):
        colour = COLOURS.get(".".join(kind))
        if colour:
            return colour
        kind = kind.parent
    return None


@lru_cache(maxsize=1)
def _converter() -> Callable[[str], str] | None:
    try:
        import mistune
        from mistune.renderers.html import HTMLRenderer
    except ImportError:  # pragma: no cover - mistune ships with Jupyter's nbconvert
        return None

    class Renderer(HTMLRenderer):
        def block_code(self, code: str, info: str | None = None) -> str:
            language = info.strip().split(None, 1)[0] if info and info.strip() else None
            return code_block(code, language)

    convert = mistune.create_markdown(
        escape=True, renderer=Renderer(escape=True), plugins=["strikethrough", "table"]
    )
    return lambda text: str(convert(text))
