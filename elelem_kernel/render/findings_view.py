"""Review findings as views: an HTML table with expandable rows, and Markdown.

Findings are the dicts of a turn record's `findings` (or objects with `to_dict()`): path,
line?, cell_id?, severity, title, body, suggestion?, code?, outside_diff?. Everything from
the model is escaped; styles are inline so the HTML survives nbconvert and GitHub.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from elelem_kernel.findings import SEVERITIES, Finding, rank
from elelem_kernel.findings import location as where
from elelem_kernel.render.markdown import escape, neutralise, to_html

COLOURS = {"blocker": "#b91c1c", "major": "#c2410c", "minor": "#a16207", "nit": "#4b5563"}
DIFF_STYLE = (
    "font-family: var(--jp-code-font-family, monospace); font-size: 0.92em; line-height: 1.4; "
    "border-radius: 4px; overflow-x: auto; margin: 4px 0; padding: 4px 0; "
    "background: var(--jp-layout-color2, rgba(127,127,127,.08))"
)
CELL = "padding: 3px 8px; text-align: left; vertical-align: top; border-bottom: 1px solid rgba(127,127,127,.25)"


#: What the views take: `Finding`s, or the dicts a record keeps.
Findings = Iterable[Finding | Mapping[str, object]]


def _dicts(findings: Findings) -> list[Mapping[str, object]]:
    out = [f.to_dict() if isinstance(f, Finding) else f for f in findings]
    return sorted(out, key=lambda f: rank(str(f.get("severity"))))


def location(finding: Mapping[str, object]) -> str:
    """`path:line`, or `path cell ID line N` for a notebook cell."""
    line, cell_id = finding.get("line"), finding.get("cell_id")
    return where(
        str(finding.get("path") or "?"),
        line if isinstance(line, int) else None,
        cell_id if isinstance(cell_id, str) else None,
    )


def suggestion_diff(finding: Mapping[str, object]) -> str | None:
    """The suggestion as a diff: the reviewed line(s) removed, the suggestion added."""
    suggestion = finding.get("suggestion")
    if not suggestion:
        return None
    old = [f"-{line}" for line in str(finding.get("code") or "").splitlines()]
    new = [f"+{line}" for line in str(suggestion).splitlines()]
    return "\n".join(old + new)


def counts(findings: Findings) -> str:
    """`3 findings (1 major, 2 nit)`, or `no findings`."""
    items = _dicts(findings)
    if not items:
        return "no findings"
    per = [f"{sum(1 for f in items if f.get('severity') == s)} {s}" for s in SEVERITIES]
    per = [p for p in per if not p.startswith("0 ")]
    noun = "finding" if len(items) == 1 else "findings"
    return f"{len(items)} {noun} ({', '.join(per)})"


def _inline(text: str) -> str:
    """Escaped text with `code spans` shown as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def diff_html(diff: str) -> str:
    """A suggestion diff as a block: removed lines red, added lines green."""
    rows = []
    for line in diff.splitlines():
        colour = {"-": "rgba(220,38,38,.15)", "+": "rgba(22,163,74,.15)"}.get(
            line[:1], "transparent"
        )
        rows.append(
            f'<div style="background: {colour}; white-space: pre">{escape(line) or " "}</div>'
        )
    return f'<div style="{DIFF_STYLE}">{"".join(rows)}</div>'


def _badge(severity: str) -> str:
    colour = COLOURS.get(severity, "#4b5563")
    return (
        f'<span style="color: #fff; background: {colour}; border-radius: 3px; '
        f'padding: 0 6px; font-size: 0.85em">{escape(severity)}</span>'
    )


def _row(finding: Mapping[str, object]) -> str:
    flag = (
        ' <span style="opacity: .7; font-size: 0.85em">(outside the diff)</span>'
        if finding.get("outside_diff")
        else ""
    )
    details = to_html(str(finding.get("body") or ""))
    diff = suggestion_diff(finding)
    if diff:
        details += "<div><b>Suggestion</b></div>" + diff_html(diff)
    return (
        "<tr>"
        f'<td style="{CELL}">{_badge(str(finding.get("severity", "")))}</td>'
        f'<td style="{CELL}"><code>{escape(location(finding))}</code>{flag}</td>'
        f'<td style="{CELL}"><details><summary style="cursor: pointer">'
        f"{_inline(str(finding.get('title') or ''))}</summary>"
        f'<div style="margin: 4px 0 6px 0">{details}</div></details></td>'
        "</tr>"
    )


def findings_html(findings: Findings) -> str:
    """A table of findings (severity, location, title); each title expands to body and diff."""
    items = _dicts(findings)
    if not items:
        return '<div style="opacity: .7">Review: no findings.</div>'
    head = "".join(f'<th style="{CELL}">{h}</th>' for h in ("Severity", "Location", "Finding"))
    rows = "".join(_row(f) for f in items)
    return (
        f'<div class="elelem-findings"><div style="font-weight: bold; margin: 4px 0">'
        f"Review: {escape(counts(items))}</div>"
        f'<table style="border-collapse: collapse; width: 100%"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _cell(text: str) -> str:
    return neutralise(text).replace("|", "\\|").replace("\n", " ")


def findings_markdown(findings: Findings) -> str:
    """The findings as a Markdown table followed by one section per finding."""
    items = _dicts(findings)
    if not items:
        return "**Review:** no findings.\n"
    lines = [
        f"**Review:** {counts(items)}",
        "",
        "| Severity | Location | Finding |",
        "|---|---|---|",
    ]
    for f in items:
        flag = " (outside the diff)" if f.get("outside_diff") else ""
        lines.append(
            f"| {_cell(str(f.get('severity')))} | `{_cell(location(f))}`{flag} | {_cell(str(f.get('title') or ''))} |"
        )
    for i, f in enumerate(items, 1):
        lines += [
            "",
            f"#### {i}. {_cell(str(f.get('title') or ''))}",
            f"*{_cell(str(f.get('severity')))}* · `{_cell(location(f))}`",
            "",
        ]
        if f.get("body"):
            lines.append(neutralise(str(f["body"])))
        diff = suggestion_diff(f)
        if diff:
            longest = max((len(run) for run in re.findall("`+", diff)), default=0)
            fence = "`" * max(3, longest + 1)  # no line of the diff can close it
            lines += ["", f"{fence}diff", neutralise(diff), fence]
    return "\n".join(lines) + "\n"
