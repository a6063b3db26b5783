"""What a review produced, and its reports: Markdown, JSON and SARIF 2.1.0."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from elelem_kernel._version import __version__
from elelem_kernel.errors import BadInput
from elelem_kernel.events import Usage
from elelem_kernel.findings import FORMATS, Finding, at_least, sort
from elelem_kernel.render.findings_view import findings_html, findings_markdown
from elelem_kernel.render.markdown import escape, neutralise, to_html
from elelem_kernel.review.diff import Skipped

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
#: SARIF has three result levels; blockers and majors are errors.
LEVELS = {"blocker": "error", "major": "error", "minor": "warning", "nit": "note"}
RULES = {
    "blocker": "Must be fixed before merging.",
    "major": "A bug or a real risk.",
    "minor": "Worth fixing.",
    "nit": "Style or taste.",
}


@dataclass
class ReviewResult:
    """The outcome of a review: findings, the reviewer's own text, and what it covered."""

    target: str
    command: str = ""
    findings: list[Finding] = field(default_factory=list)
    summary: str = ""
    reviewed: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    provider: str | None = None
    model: str | None = None
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)
    empty: bool = False
    #: `budget` when a budget stopped the review before a request (the rest not reviewed).
    stop: str | None = None

    def failed(self, threshold: str | None) -> bool:
        """Whether a finding at or above `threshold` exists (never, without a threshold)."""
        return threshold is not None and any(at_least(f.severity, threshold) for f in self.findings)

    def _repr_markdown_(self) -> str:
        return markdown(self)

    def _repr_html_(self) -> str:
        return html(self)

    def to_dict(self) -> dict[str, object]:
        return {
            "target": self.target,
            "command": self.command,
            "provider": self.provider,
            "model": self.model,
            "findings": [f.to_dict() for f in sort(self.findings)],
            "summary": self.summary,
            "reviewed": self.reviewed,
            "skipped": self.skipped,
            "usage": self.usage,
            "errors": self.errors,
            "stop": self.stop,
        }


def render(result: ReviewResult, fmt: str) -> str:
    """The report in `fmt` (markdown, json or sarif)."""
    if fmt == "json":
        return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif(result), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return markdown(result)
    raise BadInput(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


def markdown(result: ReviewResult) -> str:
    """A Markdown report: what was reviewed, the findings, the reviewer's text, skipped files."""

    if result.empty:
        return f"# Code review: {result.target}\n\nnothing to review\n"
    by = (
        f" · {result.provider}" + (f" ({result.model})" if result.model else "")
        if result.provider
        else ""
    )
    parts = [
        f"# Code review: {result.target}",
        "",
        f"`{result.command}`{by}",
        "",
        findings_markdown(result.findings),
    ]
    if result.summary.strip():
        parts += ["## Reviewer's notes", "", neutralise(result.summary.strip()), ""]
    parts += [
        "## Files",
        "",
        f"Reviewed ({len(result.reviewed)}): " + ", ".join(f"`{p}`" for p in result.reviewed),
    ]
    if result.skipped:
        parts.append(f"\nSkipped ({len(result.skipped)}):")
        parts += [f"- `{s['path']}`: {s['reason']}" for s in result.skipped]
    if result.errors:
        parts += ["", "## Errors", ""] + [f"- {e}" for e in result.errors]
    return "\n".join(parts) + "\n"


def html(result: ReviewResult) -> str:
    """The report as HTML for a notebook: findings table, the reviewer's notes, the files."""

    command = re.sub(r"\b([0-9a-f]{10})[0-9a-f]{30}\b", r"\1", result.command)
    head = f"<div><b>Code review: {escape(result.target)}</b> <code>{escape(command)}</code>"
    if result.provider:
        head += f" · {escape(result.provider)}" + (
            f" ({escape(result.model)})" if result.model else ""
        )
    head += "</div>"
    if result.empty:
        return head + "<div>nothing to review</div>"
    parts = [head, findings_html(result.findings)]
    if result.summary.strip():
        parts.append(
            f"<details><summary>Reviewer's notes</summary>{to_html(result.summary)}</details>"
        )
    files = ", ".join(f"<code>{escape(p)}</code>" for p in result.reviewed)
    parts.append(f'<div style="opacity: .8">Reviewed ({len(result.reviewed)}): {files}</div>')
    if result.skipped:
        items = "".join(
            f"<li><code>{escape(s['path'])}</code>: {escape(s['reason'])}</li>"
            for s in result.skipped
        )
        parts.append(
            f'<div style="opacity: .8">Skipped ({len(result.skipped)}):<ul>{items}</ul></div>'
        )
    if result.errors:
        parts += [f'<div style="color: #b91c1c">{escape(e)}</div>' for e in result.errors]
    return "\n".join(parts)


def _message(f: Finding) -> dict[str, str]:
    text = f.title + (f"\n\n{f.body}" if f.body else "")
    md = f"**{f.title}**" + (f"\n\n{f.body}" if f.body else "")
    if f.suggestion:
        text += f"\n\nSuggestion:\n{f.suggestion}"
        md += f"\n\nSuggestion:\n```\n{f.suggestion}\n```"
    return {"text": text, "markdown": md}


def _result(f: Finding) -> dict[str, object]:
    physical: dict[str, object] = {"artifactLocation": {"uri": f.path, "uriBaseId": "SRCROOT"}}
    if f.line and not f.cell_id:
        physical["region"] = {"startLine": f.line}
    location: dict[str, object] = {"physicalLocation": physical}
    properties: dict[str, object] = {"severity": f.severity, "outsideDiff": f.outside_diff}
    if f.cell_id:
        location["logicalLocations"] = [{"name": f.cell_id, "kind": "notebookCell"}]
        properties["cellId"] = f.cell_id
        if f.line:
            properties["cellLine"] = f.line
    return {
        "ruleId": f"review/{f.severity}",
        "ruleIndex": list(LEVELS).index(f.severity) if f.severity in LEVELS else 3,
        "level": LEVELS.get(f.severity, "note"),
        "message": _message(f),
        "locations": [location],
        "properties": properties,
    }


def sarif(result: ReviewResult) -> dict[str, object]:
    """The review as a SARIF 2.1.0 log (one run, one rule per severity)."""
    rules = [
        {
            "id": f"review/{severity}",
            "name": f"Review{severity.capitalize()}",
            "shortDescription": {"text": f"{severity}: {RULES[severity]}"},
            "defaultConfiguration": {"level": LEVELS[severity]},
        }
        for severity in LEVELS
    ]
    run = {
        "tool": {
            "driver": {
                "name": "elelem-kernel review",
                "version": __version__,
                "informationUri": "https://pypi.org/project/elelem-kernel/",
                "rules": rules,
            }
        },
        "originalUriBaseIds": {
            "SRCROOT": {"description": {"text": "The root of the reviewed git repository."}}
        },
        "invocations": [
            {
                "executionSuccessful": not result.errors,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": e}} for e in result.errors
                ],
            }
        ],
        "results": [_result(f) for f in sort(result.findings)],
        "properties": {
            "target": result.target,
            "command": result.command,
            "provider": result.provider,
            "model": result.model,
            "reviewed": result.reviewed,
            "skipped": result.skipped,
            "summary": result.summary,
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
