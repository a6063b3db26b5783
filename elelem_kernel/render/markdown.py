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

#: Schemes a link or image in the Markdown copy may point to (others: `#harmful-link`).
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})

_TAG = re.compile(r"<(?=[A-Za-z/!?])")
#: Where Markdown reads a link target: after `](` (inline) or `]:` (definition), allowing
#: more space than CommonMark does, up to the next space or `)`.
_LINK_TARGET = re.compile(r"(?P<lead>\]\s*[(:]\s*)(?P<target>[^\s)]+)")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_INVISIBLE = re.compile(r"[\x00-\x20\x7f]+")


_BLANK = re.compile(r"\n(?=[ \t]*\n)")


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
    runs: list[
        tuple[tuple[str, str] | None, list[str]]
    ] = []  # neighbouring tokens of one colour share a span
    for kind, value in lexer.get_tokens(code):
        colour = _colour(kind) if value.strip() else (runs[-1][0] if runs else None)
        if runs and runs[-1][0] == colour:
            runs[-1][1].append(value)
        else:
            runs.append((colour, [value]))
    return "".join(
        f'<span style="{_colour_style(colour)}">{escape("".join(texts))}</span>'
        if colour
        else escape("".join(texts))
        for colour, texts in runs
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


def no_blank_lines(html_text: str) -> str:
    """`html_text` shown the same, with no blank line: a blank line ends a Markdown HTML block.

    nbconvert's Markdown exporter (and GitHub) paste our HTML as a raw block; a blank line,
    as in code with an empty line, would hand the rest to Markdown. A newline before a
    blank line becomes `&#10;`, the same character once parsed, inside `<pre>` too.
    """
    return _BLANK.sub("&#10;", html_text)


def neutralise(text: str) -> str:
    """Markdown `text` that no Markdown renderer can turn into live HTML or a script link.

    For the `text/markdown` copy of a turn: frontends render Markdown with its raw HTML,
    so a reply holding `<img onerror=...>` must not reach them as a tag. Every `<` that
    could open a tag, comment or declaration becomes `&lt;`, in code too: whether a
    backtick or a fence opens code depends on the whole document (unbalanced backticks,
    list items, link titles), and guessing wrong let HTML through. In code the cost is
    that `&lt;` shows literally; the HTML copy, which frontends prefer, stays exact.
    Link and image targets whose scheme is not http, https or mailto become
    `#harmful-link`, as in the HTML copy.
    """
    return _LINK_TARGET.sub(_safe_target, _TAG.sub("&lt;", text))


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def closed(markdown: str) -> str:
    """`markdown` with a code fence it leaves open (a reply cut off in a code block) closed,
    so what follows it (the ending, the footer, the next cell) is not read as code."""
    opened = ""
    for line in markdown.splitlines():
        match = _FENCE.match(line)
        if match is None:
            continue
        run, rest = match.groups()
        if not opened:
            if not (run[0] == "`" and "`" in rest):  # a backtick fence's info has none
                opened = run
        elif run[0] == opened[0] and len(run) >= len(opened) and not rest.strip():
            opened = ""
    return f"{markdown}\n{opened}" if opened else markdown


def _safe_target(match: re.Match[str]) -> str:
    """The link target of `match`, or `#harmful-link` when its scheme is not allowed.

    The target is read as a browser would after the renderer: entities decoded,
    backslashes, whitespace and control characters dropped (`jav&#97;script:`,
    `java\\script:` and ` javascript:` all count as javascript).
    """
    target = match.group("target")
    seen = _INVISIBLE.sub("", html.unescape(target).replace("\\", ""))
    scheme = _SCHEME.match(seen)
    if scheme and scheme.group(1).lower() not in SAFE_SCHEMES:
        target = "#harmful-link"
    return match.group("lead") + target


def _colour_style(colour: tuple[str, str]) -> str:
    plain, variable = colour
    return themed("color", plain, f"var({variable})")


def _colour(kind: tuple[str, ...] | None) -> tuple[str, str] | None:
    """The colour of a pygments token type, or of the nearest parent type that has one."""
    while kind is not None and len(kind):
        colour = COLOURS.get(".".join(kind))
        if colour:
            return colour
        kind = getattr(kind, "parent", None)
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
