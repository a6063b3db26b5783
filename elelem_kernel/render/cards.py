"""HTML pieces shared by the live widget view and the frozen static output.

Inline styles only (outputs carry no stylesheet). Each themed declaration is written
twice, a plain value readable on light and dark backgrounds first, then the JupyterLab
theme variable: JupyterLab's sanitizer (for notebooks it did not sign, e.g. any notebook
reopened from someone else) drops declarations that use `var(...)` and keeps the plain
one; trusted outputs and nbconvert use the theme variable.
"""

from __future__ import annotations

import json
import re
from typing import Any

from elelem_kernel.agent.compaction import note
from elelem_kernel.agent.context import meter
from elelem_kernel.agent.media import BASE64, TYPES
from elelem_kernel.render.markdown import escape, themed, to_html
from elelem_kernel.text import shorten

RESULT_SHOWN = 2_000  #: characters of a tool result shown before "show all"
TEXT_KEYS = ("content", "stdout", "output", "text", "stderr", "value", "diff")

DIM = "opacity: 0.65"
CARD = (
    themed("border", "1px solid rgba(127,127,127,.35)", "1px solid var(--jp-border-color2)")
    + "; border-radius: 4px; margin: 4px 0; padding: 2px 8px"
)
PRE = (
    themed("background", "rgba(127,127,127,.12)", "var(--jp-layout-color2)")
    + "; padding: 4px 8px; border-radius: 3px; margin: 2px 0 6px; overflow-x: auto; "
    + themed("font-family", "monospace", "var(--jp-code-font-family)")
    + "; font-size: 0.9em; white-space: pre-wrap; overflow-wrap: break-word; "
    "max-height: 24em; overflow-y: auto"
)
LABEL = "font-size: 0.85em; opacity: 0.65; margin-top: 4px"
FOOTER = "font-size: 0.85em; opacity: 0.65; margin-top: 6px"
SUMMARY = "cursor: pointer; padding: 2px 0"

#: state → (symbol, words)
STATES = {
    "approval": ("?", "waiting for approval"),
    "running": ("…", "running"),
    "ok": ("✓", "ok"),
    "failed": ("✗", "failed"),
    "declined": ("⊘", "declined"),
    "interrupted": ("■", "interrupted"),
    "not run": ("⊘", "not run: the reply was cut off at max_tokens"),
}
#: state → colour declarations, mid-tones readable on white and on near-black
STATE_COLOURS = {
    "ok": themed("color", "#2e9e44", "var(--jp-success-color1)"),
    "failed": themed("color", "#d9453b", "var(--jp-error-color1)"),
    "declined": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "interrupted": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "approval": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "not run": themed("color", "#c77c00", "var(--jp-warn-color1)"),
}


def pre(text: str) -> str:
    """`text` escaped in a styled `<pre>`."""
    return f'<pre style="{PRE}">{escape(text)}</pre>'


def arguments_text(arguments: Any) -> str:
    """Tool arguments as pretty JSON."""
    try:
        return json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


def short_arguments(arguments: Any, limit: int = 50) -> str:
    """One line saying what a call is about: its first string argument, cut to `limit`."""
    if isinstance(arguments, dict):
        for value in arguments.values():
            if isinstance(value, str) and value.strip() not in ("", ".", "./"):
                line = re.sub(r"\b([0-9a-f]{10})[0-9a-f]{30}\b", r"\1", " ".join(value.split()))
                return shorten(line, limit)
    return ""


def result_parts(result: Any) -> tuple[str, list[tuple[str, str]]]:
    """A tool result as `(facts, texts)`: a short line of its small fields, and its text fields.

    Multi-line strings (file contents, command output) show as text, not as JSON with
    escapes; a result with no such field is pretty JSON (without the `ok` flag).
    """
    value = result
    if isinstance(result, str):
        try:
            value = json.loads(result)
        except ValueError:
            return "", [("", result)]
    if not isinstance(value, dict):
        return "", [("", arguments_text(value))]
    rest = {k: v for k, v in value.items() if k != "ok"}
    if len(rest) == 1 and isinstance(next(iter(rest.values())), str):
        return "", [("", next(iter(rest.values())))]
    texts = [
        (k, v)
        for k, v in rest.items()
        if isinstance(v, str) and ("\n" in v or k in TEXT_KEYS or len(v) > 80)
    ]
    if not texts:
        return "", [("", arguments_text(rest))] if rest else []
    others = {k: v for k, v in rest.items() if k not in dict(texts)}
    small = {k: v for k, v in others.items() if isinstance(v, (str, int, float, bool)) or v is None}
    facts = " · ".join(f"{k}: {v}" for k, v in small.items())
    texts = [(k, v) for k, v in texts if v]
    big = {k: v for k, v in others.items() if k not in small}
    if big:
        texts.append(("", arguments_text(big)))
    if len(texts) == 1 and texts[0][0] in TEXT_KEYS:
        texts = [("", texts[0][1])]
    return facts, texts


def result_text(result: Any) -> str:
    """A tool result as readable plain text (see `result_parts`)."""
    facts, texts = result_parts(result)
    blocks = [facts] if facts else []
    blocks += [f"{k}:\n{v}" if k else v for k, v in texts]
    return "\n".join(blocks)


def result_html(result: Any) -> str:
    """A bounded, expandable view of a tool result: a facts line, then its texts."""
    facts, texts = result_parts(result)
    out = [f'<div style="{LABEL}">{escape(facts)}</div>'] if facts else []
    for key, text in texts:
        if key:
            out.append(f'<div style="{LABEL}">{escape(key)}</div>')
        out.append(_bounded(text))
    return "".join(out)


def images_html(images: Any) -> str:
    """`<img>` tags for a call's images: allowlisted raster types, base64 data only."""
    out = []
    for image in images if isinstance(images, list) else []:
        mime = image.get("mime_type") if isinstance(image, dict) else None
        data = image.get("data") if isinstance(image, dict) else None
        if mime in TYPES and isinstance(data, str) and BASE64.match(data):
            out.append(
                f'<img src="data:{mime};base64,{data}" alt="image from the tool" '
                'style="max-width: 100%; max-height: 320px; margin: 4px 0; display: block">'
            )
    return "".join(out)


def _bounded(text: str) -> str:
    if len(text) <= RESULT_SHOWN:
        return pre(text)
    more = len(text) - RESULT_SHOWN
    return (
        pre(text[:RESULT_SHOWN] + "…")
        + f'<details><summary style="{SUMMARY}; {DIM}">show all ({more:,} more characters)'
        + f"</summary>{pre(text)}</details>"
    )


def state_html(state: str, ms: int | None = None) -> str:
    """The coloured state words of a tool card, with its duration when known."""
    symbol, words = STATES.get(state, ("•", state))
    colour = STATE_COLOURS.get(state)
    style = f' style="{colour}"' if colour else ""
    duration = f" · {seconds(ms)}" if ms else ""
    return f'<span{style}>{symbol} {escape(words)}</span><span style="{DIM}">{duration}</span>'


def card_summary(name: str, arguments: Any, state: str, ms: int | None = None) -> str:
    """The one-line summary of a tool card: name, what it is about, state, duration."""
    about = short_arguments(arguments)
    about_html = f' <code style="{DIM}">{escape(about)}</code>' if about else ""
    return f"<b>{escape(name)}</b>{about_html} &nbsp;{state_html(state, ms)}"


def arguments_html(arguments: Any) -> str:
    """The call's arguments as a collapsible pretty-JSON section."""
    return (
        f'<details><summary style="{SUMMARY}; {LABEL}">arguments</summary>'
        f"{pre(arguments_text(arguments))}</details>"
    )


def tool_card(call: dict[str, Any], state: str | None = None) -> str:
    """A finished call of a turn record as a collapsible card."""
    state = state or call.get("state") or _state_of(call)
    body = arguments_html(call.get("arguments", {}))
    if call.get("result") is not None:
        body += f'<div style="{LABEL}">result</div>' + result_html(call["result"])
    body += images_html(call.get("images"))
    summary = card_summary(str(call.get("name", "?")), call.get("arguments"), state, call.get("ms"))
    return f'<details style="{CARD}"><summary style="{SUMMARY}">{summary}</summary>{body}</details>'


def thinking_html(text: str, open: bool = False) -> str:
    """Reasoning text, dimmed, in a collapsible section (collapsed unless `open`)."""
    flag = " open" if open else ""
    return (
        f'<details{flag} style="margin: 2px 0"><summary style="{SUMMARY}; {DIM}">thinking</summary>'
        f'<div style="{DIM}; white-space: pre-wrap; font-size: 0.92em">{escape(text)}</div>'
        "</details>"
    )


def seconds(ms: float | None) -> str:
    """A duration for people: `850 ms`, `2.3 s`, `1 min 05 s`."""
    ms = ms or 0
    if ms < 1000:
        return f"{int(ms)} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, rest = divmod(int(ms / 1000), 60)
    return f"{minutes} min {rest:02d} s"


def footer_text(
    usage: dict[str, Any] | None,
    ms: float | None,
    rounds: int | None,
    stop: str | None,
    provider: str | None = None,
    model: str | None = None,
    cost: float | str | None = None,
    context: dict[str, Any] | None = None,
) -> str:
    """`in 1,234 · out 56 · cached 7 · ctx 1.3k/200k · 2.3 s · 2 rounds · end_turn · openai/gpt-x · $0.0012`.

    `cost` in dollars (0 or None: not shown), or a word such as "cost unknown"; `context`
    the record's meter of the last request (`agent/context.py`).
    """

    usage = usage or {}
    if stop in ("interrupted", "error") and not any(usage.values()):
        parts = ["tokens unknown"]  # the stream ended before the provider counted them
    else:
        parts = [f"in {int(usage.get('input') or 0):,}", f"out {int(usage.get('output') or 0):,}"]
    if usage.get("cache_read"):
        parts.append(f"cached {int(usage['cache_read']):,}")
    gauge = meter(context)
    if gauge:
        parts.append(gauge)
    parts.append(seconds(ms))
    if rounds is not None:
        parts.append(f"{rounds} round" + ("" if rounds == 1 else "s"))
    if stop:
        parts.append(stop)
    if provider or model:
        names = [str(p) for p in (provider, model) if p]
        parts.append("/".join(dict.fromkeys(names)))  # "demo", not "demo/demo"
    if isinstance(cost, str):
        parts.append(cost)
    elif cost:
        parts.append(f"${cost:.4f}")
    return " · ".join(parts)


def compaction_html(entry: dict[str, Any]) -> str:
    """The one-line note of a compaction, collapsed, with the summary inside."""

    colour = STATE_COLOURS["declined"] + "; " if entry.get("failed") else ""
    summary = str(entry.get("summary") or "") or "(no summary)"
    return (
        f'<details style="margin: 2px 0"><summary style="{SUMMARY}; {colour}{DIM}">'
        f"{escape(note(entry))}</summary>"
        f'<div style="{DIM}; white-space: pre-wrap; font-size: 0.92em">{escape(summary)}</div>'
        "</details>"
    )


def footer_html(text: str) -> str:
    """The footer line, dimmed."""
    return f'<div style="{FOOTER}">{escape(text)}</div>'


def notice_html(text: str, state: str = "failed") -> str:
    """A coloured notice (an error, an interruption); `text` is safe Markdown."""
    colour = STATE_COLOURS.get(state, "")
    return f'<div style="{colour}; margin: 4px 0">{to_html(text)}</div>'


def _state_of(call: dict[str, Any]) -> str:
    if call.get("ok"):
        return "ok"
    text = str(call.get("result") or "")
    if "interrupted" in text:
        return "interrupted"
    if "cut off at max_tokens" in text:
        return "not run"
    if "declined" in text or "not run" in text or "denied" in text:
        return "declined"
    return "failed"
