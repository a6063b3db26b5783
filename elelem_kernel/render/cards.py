"""HTML pieces shared by the live widget view and the frozen static output.

What they say in words (states, arguments, results, durations) is `call_text.py`.

Inline styles only (outputs carry no stylesheet). Each themed declaration is written
twice, a plain value readable on light and dark backgrounds first, then the JupyterLab
theme variable: JupyterLab's sanitizer (for notebooks it did not sign, e.g. any notebook
reopened from someone else) drops declarations that use `var(...)` and keeps the plain
one; trusted outputs and nbconvert use the theme variable.
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem_kernel.agent.media import BASE64, SHOWN_IN_CELL, TYPES
from elelem_kernel.images import label, placeholder
from elelem_kernel.render.call_text import (
    STATES,
    arguments_text,
    result_parts,
    seconds,
    short_arguments,
    state_of,
)
from elelem_kernel.render.footer import compaction_note
from elelem_kernel.render.markdown import escape, themed, to_html
from elelem_kernel.text import clip

RESULT_SHOWN = 2_000  #: characters of a tool result shown before "show all"

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

#: state → colour declarations, mid-tones readable on white and on near-black
STATE_COLOURS = {
    "ok": themed("color", "#2e9e44", "var(--jp-success-color1)"),
    "failed": themed("color", "#d9453b", "var(--jp-error-color1)"),
    "declined": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "interrupted": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "approval": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "person": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "not run": themed("color", "#c77c00", "var(--jp-warn-color1)"),
    "over budget": themed("color", "#c77c00", "var(--jp-warn-color1)"),
}


def pre(text: str) -> str:
    """`text` escaped in a styled `<pre>`."""
    return f'<pre style="{PRE}">{escape(text)}</pre>'


def result_html(result: object) -> str:
    """A bounded, expandable view of a tool result: a facts line, then its texts."""
    facts, texts = result_parts(result)
    out = [f'<div style="{LABEL}">{escape(facts)}</div>'] if facts else []
    for key, text in texts:
        if key:
            out.append(f'<div style="{LABEL}">{escape(key)}</div>')
        out.append(_bounded(text))
    return "".join(out)


def images_html(images: object, alt: str = "image from the tool") -> str:
    """`<img>` tags for a call's (or a prompt's) images: allowlisted raster types, base64
    data only."""
    out = []
    for image in images if isinstance(images, list) else []:
        if not isinstance(image, dict):
            continue
        mime, data = image.get("mime_type"), image.get("data")
        if mime in TYPES and (
            image.get("shown") == SHOWN_IN_CELL or image.get("in") == "display_data"
        ):
            out.append(f"<div><em>{escape(label(image))} image, shown in the cell</em></div>")
        elif mime in TYPES and isinstance(data, str) and BASE64.match(data):
            out.append(
                f'<img src="data:{mime};base64,{data}" alt="{escape(alt)}" '
                'style="max-width: 100%; max-height: 320px; margin: 4px 0; display: block">'
            )
        elif mime in TYPES and data is None:  # a stored record: the image was in its output
            out.append(f"<div><em>{escape(placeholder(image))}</em></div>")
    return "".join(out)


def _bounded(text: str) -> str:
    if len(text) <= RESULT_SHOWN:
        return pre(text)
    return (
        pre(clip(text, RESULT_SHOWN))
        + f'<details><summary style="{SUMMARY}; {DIM}">show all</summary>{pre(text)}</details>'
    )


def state_html(state: str, ms: int | None = None, detail: str | None = None) -> str:
    """The coloured state words of a tool card (`detail` instead of its words when given:
    `waiting for you: cell [5] above`), with its duration when known."""
    symbol, words = STATES.get(state, ("•", state))
    words = detail or words
    colour = STATE_COLOURS.get(state)
    style = f' style="{colour}"' if colour else ""
    duration = f" · {seconds(ms)}" if ms else ""
    return f'<span{style}>{symbol} {escape(words)}</span><span style="{DIM}">{duration}</span>'


def card_summary(
    name: str, arguments: object, state: str, ms: int | None = None, detail: str | None = None
) -> str:
    """The one-line summary of a tool card: name, what it is about, state, duration."""
    about = short_arguments(arguments)
    about_html = f' <code style="{DIM}">{escape(about)}</code>' if about else ""
    return f"<b>{escape(name)}</b>{about_html} &nbsp;{state_html(state, ms, detail)}"


def arguments_html(arguments: object) -> str:
    """The call's arguments as a collapsible pretty-JSON section."""
    return (
        f'<details><summary style="{SUMMARY}; {LABEL}">arguments</summary>'
        f"{pre(arguments_text(arguments))}</details>"
    )


def tool_card(call: Mapping[str, object], state: str | None = None) -> str:
    """A finished call as a card folded to its summary line (the live view's card ends as
    this too, so nothing opens or closes when the turn freezes), its images below the
    fold: a plot shows beside the call that made it."""
    given = call.get("state")
    state = state or (given if isinstance(given, str) and given else state_of(call))
    body = arguments_html(call.get("arguments", {}))
    if call.get("result") is not None:
        body += f'<div style="{LABEL}">result</div>' + result_html(call["result"])
    ms = call.get("ms")
    ms = int(ms) if isinstance(ms, (int, float)) else None
    summary = card_summary(str(call.get("name", "?")), call.get("arguments"), state, ms)
    images = images_html(call.get("images"))
    shown = f'<div style="padding: 0 8px 4px">{images}</div>' if images else ""
    return (
        f'<div style="{CARD}"><details><summary style="{SUMMARY}">{summary}</summary>{body}'
        f"</details>{shown}</div>"
    )


def thinking_html(text: str, open: bool = False) -> str:
    """Reasoning text, dimmed, in a collapsible section (collapsed unless `open`)."""
    flag = " open" if open else ""
    return (
        f'<details{flag} style="margin: 2px 0"><summary style="{SUMMARY}; {DIM}">thinking</summary>'
        f'<div style="{DIM}; white-space: pre-wrap; font-size: 0.92em">{escape(text)}</div>'
        "</details>"
    )


def compaction_html(entry: Mapping[str, object]) -> str:
    """The one-line note of a compaction, collapsed, with the summary inside."""

    colour = STATE_COLOURS["declined"] + "; " if entry.get("failed") else ""
    summary = str(entry.get("summary") or "") or "(no summary)"
    return (
        f'<details style="margin: 2px 0"><summary style="{SUMMARY}; {colour}{DIM}">'
        f"{escape(compaction_note(entry))}</summary>"
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
