"""HTML pieces shared by the live widget view and the frozen static output.

Inline styles only (outputs carry no stylesheet), colours from the JupyterLab theme
variables with neutral fallbacks, so a turn reads well in light and dark themes, in
nbconvert's HTML and in frontends that know no `--jp-*` variables.
"""

from __future__ import annotations

import json
from typing import Any

from .markdown import escape

RESULT_SHOWN = 2_000  #: characters of a tool result shown before "show all"

DIM = "opacity: 0.65"
CARD = (
    "border: 1px solid var(--jp-border-color2, rgba(127,127,127,.35)); border-radius: 4px; "
    "margin: 4px 0; padding: 2px 8px; background: transparent"
)
PRE = (
    "background: var(--jp-layout-color2, rgba(127,127,127,.1)); color: inherit; "
    "padding: 4px 8px; border-radius: 3px; margin: 2px 0 6px; overflow-x: auto; "
    "font-family: var(--jp-code-font-family, monospace); font-size: 0.9em; "
    "white-space: pre-wrap; word-break: break-word; max-height: 24em; overflow-y: auto"
)
LABEL = "font-size: 0.85em; opacity: 0.65; margin-top: 4px"
FOOTER = "font-size: 0.85em; opacity: 0.65; margin-top: 6px"
SUMMARY = "cursor: pointer; padding: 2px 0"

#: state → (symbol, words); the symbol carries colour through the theme's own palette.
STATES = {
    "approval": ("?", "waiting for approval"),
    "running": ("…", "running"),
    "ok": ("✓", "ok"),
    "failed": ("✗", "failed"),
    "declined": ("⊘", "declined"),
    "interrupted": ("■", "interrupted"),
}
STATE_COLOURS = {
    "ok": "var(--jp-success-color1, #2e7d32)",
    "failed": "var(--jp-error-color1, #c62828)",
    "declined": "var(--jp-warn-color1, #b26a00)",
    "interrupted": "var(--jp-warn-color1, #b26a00)",
    "approval": "var(--jp-warn-color1, #b26a00)",
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


def short_arguments(arguments: Any, limit: int = 80) -> str:
    """One line saying what a call is about: its first string argument, cut to `limit`."""
    if isinstance(arguments, dict):
        for value in arguments.values():
            if isinstance(value, str) and value.strip():
                line = " ".join(value.split())
                return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def result_text(result: Any) -> str:
    """A tool result (the JSON string the model sees, or a dict) as readable text.

    A result whose only payload is one string shows that string as is (file contents,
    command output); anything else is pretty JSON without the `ok` flag.
    """
    value = result
    if isinstance(result, str):
        try:
            value = json.loads(result)
        except ValueError:
            return result
    if isinstance(value, dict):
        rest = {k: v for k, v in value.items() if k != "ok"}
        if len(rest) == 1 and isinstance(next(iter(rest.values())), str):
            return next(iter(rest.values()))
        value = rest
    return arguments_text(value)


def result_html(result: Any) -> str:
    """A bounded, expandable view of a tool result."""
    text = result_text(result)
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
    style = f' style="color: {colour}"' if colour else ""
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
    summary = card_summary(str(call.get("name", "?")), call.get("arguments"), state, call.get("ms"))
    return f'<details style="{CARD}"><summary style="{SUMMARY}">{summary}</summary>{body}</details>'


def thinking_html(text: str) -> str:
    """Reasoning text, dimmed, in a collapsed section."""
    return (
        f'<details style="margin: 2px 0"><summary style="{SUMMARY}; {DIM}">thinking</summary>'
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
    cost: float | None = None,
) -> str:
    """`in 1,234 · out 56 · cached 7 · 2.3 s · 2 rounds · end_turn · demo/model · $0.0012`."""
    usage = usage or {}
    parts = [f"in {int(usage.get('input') or 0):,}", f"out {int(usage.get('output') or 0):,}"]
    if usage.get("cache_read"):
        parts.append(f"cached {int(usage['cache_read']):,}")
    parts.append(seconds(ms))
    if rounds is not None:
        parts.append(f"{rounds} round" + ("" if rounds == 1 else "s"))
    if stop:
        parts.append(stop)
    if provider or model:
        parts.append("/".join(str(p) for p in (provider, model) if p))
    if cost:
        parts.append(f"${cost:.4f}")
    return " · ".join(parts)


def footer_html(text: str) -> str:
    """The footer line, dimmed."""
    return f'<div style="{FOOTER}">{escape(text)}</div>'


def notice_html(text: str, state: str = "failed") -> str:
    """A one-line coloured notice (an error, an interruption)."""
    colour = STATE_COLOURS.get(state, "inherit")
    return f'<div style="color: {colour}; margin: 4px 0">{escape(text)}</div>'


def _state_of(call: dict[str, Any]) -> str:
    if call.get("ok"):
        return "ok"
    text = str(call.get("result") or "")
    if "interrupted" in text:
        return "interrupted"
    if "declined" in text or "not run" in text or "denied" in text:
        return "declined"
    return "failed"
