"""A finished turn as a static notebook output: HTML, Markdown and plain text.

`bundle(record)` gives the `data` and `metadata` of a display output. The HTML needs no
script and no stylesheet (collapsible parts are `<details>`), so it shows the same in
JupyterLab after reopening, in `jupyter nbconvert --to html` and on GitHub. Everything
from the model or a tool is escaped or sanitised; the record itself rides along in
`metadata["elelem"]` so the conversation can be restored from the notebook.
"""

from __future__ import annotations

from collections.abc import Mapping

from elelem_kernel.agent.media import without_data
from elelem_kernel.agent.record import RecordCall, RecordRound, TurnRecord
from elelem_kernel.names import RECORD_KEY
from elelem_kernel.render import cards
from elelem_kernel.render.call_text import STATES, seconds, short_arguments, state_of
from elelem_kernel.render.findings_view import findings_html, findings_markdown, location
from elelem_kernel.render.footer import compaction_note, footer_line
from elelem_kernel.render.markdown import closed, neutralise, no_blank_lines, to_html
from elelem_kernel.render.markdown_text import to_text
from elelem_kernel.text import more, shorten
from elelem_kernel.visible import visible

MIMETYPES = ("text/html", "text/markdown", "text/plain")
TURN = "font-family: inherit; line-height: 1.5"
CODE_LINES = 12  # lines of a call's code in the text/plain output
CODE_WIDTH = 200  # characters of one such line


def bundle(record: TurnRecord) -> tuple[dict[str, str], dict[str, TurnRecord]]:
    """`(data, metadata)` of the frozen output of one turn record."""
    data = {
        "text/html": html(record),
        "text/markdown": markdown(record),
        "text/plain": plain(record),
    }
    return data, {RECORD_KEY: stored(record)}


def stored(record: TurnRecord) -> TurnRecord:
    """The record as the output keeps it: the prompt's and the calls' images without their
    base64, which the output's HTML already holds (`"in": "text/html"`), so the notebook
    has each image once."""
    if isinstance(record.get("prompt_images"), list):
        record = {**record, "prompt_images": without_data(record["prompt_images"])}
    rounds = record.get("rounds")
    if not isinstance(rounds, list) or not any(
        isinstance(c, dict) and c.get("images")
        for r in rounds
        if isinstance(r, dict)
        for c in r.get("calls") or []
    ):
        return record
    copy = record.copy()
    copy["rounds"] = [_stored_round(r) if isinstance(r, dict) else r for r in rounds]
    return copy


def _stored_round(round_: RecordRound) -> RecordRound:
    calls = []
    for call in round_.get("calls") or []:
        if isinstance(call, dict) and isinstance(call.get("images"), list):
            call = call.copy()
            call["images"] = without_data(call["images"])
        calls.append(call)
    kept = round_.copy()
    kept["calls"] = calls
    return kept


def html(record: TurnRecord) -> str:
    """The turn as self-contained HTML: thinking, text and tool cards in order, footer."""
    parts: list[str] = [notice_html(n) for n in _notices(record)]
    pictures = cards.images_html(record.get("prompt_images"), "image sent with the prompt")
    if pictures:
        parts.append(f"<div>{pictures}</div>")
    compaction = record.get("compaction")
    if isinstance(compaction, dict):
        parts.append(cards.compaction_html(compaction))
    for round_ in _rounds(record):
        if round_.get("thinking"):
            parts.append(cards.thinking_html(round_["thinking"]))
        if round_.get("text"):
            parts.append(f"<div>{to_html(round_['text'])}</div>")
        parts.extend(cards.tool_card(call) for call in round_.get("calls") or [])
    if "findings" in record:
        parts.append(findings_html(_findings(record)))
    parts.extend(_ending_html(record))
    parts.append(cards.footer_html(footer_line(record)))
    turn = f'<div class="elelem-turn" style="{TURN}">{"".join(parts)}</div>'
    return no_blank_lines(turn)  # one HTML block for nbconvert --to markdown and GitHub


def markdown(record: TurnRecord) -> str:
    """The turn as Markdown: the text with raw HTML made inert, calls as short lines."""
    parts: list[str] = [_notice(n) for n in _notices(record)]
    parts += [f"*{neutralise(line)}*" for line in _compaction_line(record)]
    for round_ in _rounds(record):
        if round_.get("text"):
            parts.append(closed(neutralise(round_["text"])))
        for call in round_.get("calls") or []:
            parts.append(f"> {neutralise(_call_line(call))}")
    if "findings" in record:
        parts.append(findings_markdown(_findings(record)))
    ending = _ending(record)
    if ending:
        parts.append(f"*{neutralise(ending)}*")  # an error message may quote model text
    parts.append(f"<sub>{neutralise(footer_line(record))}</sub>")
    return "\n\n".join(parts)


def plain(record: TurnRecord) -> str:
    """The turn as plain text: reply, calls, ending, footer; control characters escaped.

    The reply's Markdown is rendered as text (no `**`, backticks or table pipes): text
    clients (jupyter console, qtconsole, IPython in a terminal) show this.
    """
    parts: list[str] = [f"[{n}]" for n in _notices(record)]
    parts += [f"[{line}]" for line in _compaction_line(record)]
    for round_ in _rounds(record):
        if round_.get("text"):
            parts.append(to_text(str(round_["text"])))
        parts.extend(_plain_call(call) for call in round_.get("calls") or [])
    parts.extend(f"- {_finding_line(f)}" for f in _findings(record))
    ending = _ending(record)
    if ending:
        parts.append(f"[{ending}]")
    parts.append(f"-- {footer_line(record)}")
    return visible("\n\n".join(parts))  # a terminal (IPython, jupyter console) shows it


def _compaction_line(record: TurnRecord) -> list[str]:
    """The compaction note of the turn, if it made one (its summary is in the HTML)."""

    entry = record.get("compaction")
    return [compaction_note(entry)] if isinstance(entry, dict) else []


def _rounds(record: TurnRecord) -> list[RecordRound]:
    rounds = record.get("rounds")
    if isinstance(rounds, list) and rounds:
        return [r for r in rounds if isinstance(r, dict)]
    reply = record.get("reply")
    return [{"thinking": "", "text": reply, "calls": []}] if reply else []


def _notices(record: TurnRecord) -> list[str]:
    notices = record.get("notices")
    return [n for n in notices if isinstance(n, str)] if isinstance(notices, list) else []


def notice_html(text: str) -> str:
    """A notice of the turn (an MCP server that failed, ...) as coloured HTML."""
    return cards.notice_html(_notice(text))


def _notice(text: str) -> str:
    """A notice as Markdown: its first line as text, the rest (a stderr tail) as code."""
    first, _, rest = text.partition("\n")
    out = neutralise(first)
    if rest.strip():
        out += "\n\n```text\n" + rest.replace("`", "'") + "\n```"
    return out


def _ending(record: TurnRecord) -> str:
    stop = record.get("stop")
    if stop == "interrupted":
        return "interrupted: the reply above is partial"
    if stop == "error":
        return f"Error: {record.get('error') or 'the turn failed'}"
    if stop == "max_tokens":
        return (
            "cut off: the model reached its output limit (max_tokens); raise it with "
            "-o max_tokens=N, %%elelem -o max_tokens=N or /option max_tokens N"
        )
    if stop == "context_full":
        return f"stopped: {record.get('error') or 'the context window is full'}"
    if stop == "max_rounds":
        return "stopped: too many rounds of tool calls in one turn"
    if stop == "budget":
        return str(record.get("error") or "budget: stopped before passing the budget")
    return ""


def _ending_html(record: TurnRecord) -> list[str]:
    ending = _ending(record)
    if not ending:
        return []
    state = "failed" if record.get("stop") == "error" else "interrupted"
    return [cards.notice_html(ending, state)]


def _findings(record: TurnRecord) -> list[dict[str, object]]:
    findings = record.get("findings")
    return [f for f in findings if isinstance(f, dict)] if isinstance(findings, list) else []


def _finding_line(finding: Mapping[str, object]) -> str:
    return f"**{finding.get('severity', '?')}** {location(finding)}: {finding.get('title', '')}"


def _plain_call(call: RecordCall) -> str:
    """A call as text: its line, then its code (a multi-line argument) kept line by line.

    The one-line summary joins lines with spaces, which reads as different code; the
    first `CODE_LINES` lines are shown indented (a code block once in Markdown).
    """
    lines = _code_lines(call.get("arguments"))
    if not lines:
        return f"[{_call_line(call)}]"
    shown = [f"    {shorten(line, CODE_WIDTH)}" for line in lines[:CODE_LINES]]
    if len(lines) > CODE_LINES:
        shown.append(f"    {more(len(lines) - CODE_LINES, 'lines')}")
    return f"[{_call_line(call, summary=False)}]\n" + "\n".join(shown)


def _code_lines(arguments: object) -> list[str]:
    """The lines of the argument the summary would show, when it has more than one."""
    if not isinstance(arguments, dict):
        return []
    for value in arguments.values():
        if isinstance(value, str) and value.strip() not in ("", ".", "./"):
            lines = value.strip("\n").splitlines()
            return lines if len(lines) > 1 else []
    return []


def _call_line(call: Mapping[str, object], *, summary: bool = True) -> str:
    given = call.get("state")
    state = given if isinstance(given, str) and given else state_of(call)
    symbol = STATES.get(state, ("•", state))[0]
    about = short_arguments(call.get("arguments")) if summary else ""
    about = f" `{about.replace('`', '')}`" if about else ""
    ms = call.get("ms")
    took = seconds(ms if isinstance(ms, (int, float)) else None)
    return f"{symbol} {call.get('name', '?')}{about} ({state}, {took})"
