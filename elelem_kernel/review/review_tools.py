"""The review's tools: `report_finding` (records a finding) and a read-only `git`.

Both are `read` tools, so plan mode offers them and no approval is asked. Plan mode offers
no `bash`; the `git` tool takes its place for history and diffs and runs only
`diff`, `log`, `show`, `blame`, `status`, `ls-files` and `grep`, with options from an
allowlist (`git_options`: read-only, no file or program argument, exact spellings) and
paths inside the repository, through the neutral git of `git_command`. `git diff` of revisions shows
notebooks cell by cell, as the review prompt does, and `git show REV:nb.ipynb` shows a
notebook's cell sources with ids, without outputs.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.agent.toolset import Tools
from elelem_kernel.errors import ReviewError
from elelem_kernel.findings import SEVERITIES, Finding
from elelem_kernel.review import cell_sources, git, git_options
from elelem_kernel.review import diff as diffs
from elelem_kernel.review.target import Target, resolve
from elelem_kernel.tools.declaration import Arguments, Result, Tool

if TYPE_CHECKING:
    from elelem_kernel.agent.toolbox import Toolbox
    from elelem_kernel.tools.declaration import ToolContext

TOOL_NAMES = ("report_finding", "git")
GIT_COMMANDS = git_options.COMMANDS
#: Options that keep a subcommand from running textconv or external diff programs.
SAFE = {
    "diff": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "blame": ("--no-textconv",),
    "grep": ("--no-textconv",),
}
MAX_OUTPUT = 40_000

FINDING_PARAMS: dict[str, dict[str, object]] = {
    "path": {"type": "string", "description": "File path relative to the repository root"},
    "line": {
        "type": "integer",
        "minimum": 1,
        "description": "Line in the new version (in a notebook: within the cell)",
    },
    "cell_id": {"type": "string", "description": "Notebook cell id, for a finding in a notebook"},
    "severity": {"type": "string", "enum": list(SEVERITIES)},
    "title": {"type": "string", "description": "One line: what is wrong"},
    "body": {"type": "string", "description": "Why it matters and how to fix it (Markdown)"},
    "suggestion": {
        "type": "string",
        "description": "Replacement code for the line(s), if you have one",
    },
}


@dataclass
class FindingLog:
    """What the review tools know and collect: the target, the files of the diff, the findings."""

    target: Target
    files: set[str]
    workspace: Path
    findings: list[Finding] = field(default_factory=list)

    def normalize(self, path: str) -> str:
        """`path` as the diff names it: strips `./`, `a/`, `b/`, the root, a workspace prefix."""
        path = path.strip()
        candidates = [path]
        for prefix in ("./", "a/", "b/"):
            if path.startswith(prefix):
                candidates.append(path[len(prefix) :])
        for base in (self.workspace, self.target.root):
            full = (base / path).resolve()
            try:
                candidates.append(full.relative_to(self.target.root.resolve()).as_posix())
            except ValueError:
                pass
        return next((c for c in candidates if c in self.files), path)

    def inside(self, path: str) -> bool:
        """Whether `path` names a place inside the repository (symlinks resolved)."""
        root = self.target.root.resolve()
        return not path.startswith("/") and (root / path).resolve().is_relative_to(root)

    def code_at(self, path: str, line: int | None, cell_id: str | None) -> str | None:
        """The reviewed line `line` of `path` (or of cell `cell_id`), if it exists."""
        if not line or not self.inside(path):
            return None
        raw = diffs.new_bytes(self.target, path)
        if raw is None:
            return None
        text = (
            cell_sources.cell_source(raw, cell_id)
            if cell_id
            else raw.decode("utf-8", errors="replace")
        )
        lines = (text or "").splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else None

    def record(self, args: Arguments) -> tuple[Finding, list[str]]:
        """Turn report_finding arguments into a Finding; notes say what was odd about them."""
        path = self.normalize(str(args["path"]))
        finding = Finding(
            path=path,
            severity=args["severity"],
            title=str(args["title"]).strip(),
            body=str(args.get("body", "")).strip(),
            line=args.get("line"),
            cell_id=args.get("cell_id") or None,
            suggestion=args.get("suggestion") or None,
        )
        notes = []
        if path not in self.files:
            finding.outside_diff = True
            notes.append(
                f"{path} is not among the files of this diff; the finding is kept but flagged"
            )
        finding.code = self.code_at(path, finding.line, finding.cell_id)
        if finding.line and finding.code is None and not finding.outside_diff:
            notes.append(
                f"line {finding.line} was not found in {finding.location.split(' line')[0]}"
            )
        self.findings.append(finding)
        return finding, notes


def review_toolset(
    context: ToolContext, files: Iterable[str], target: Target
) -> tuple[Tools, FindingLog]:
    """`report_finding` and `git` for a review of `target` as a toolset, for a session's
    tool `context`, and the log they fill. Findings also go into the turn's `turn_extras`,
    so its record carries them."""
    log = FindingLog(target, set(files), Path(context.workspace))

    def report_finding(args: Arguments) -> Result:
        finding, notes = log.record(args)
        context.turn_extras.setdefault("findings", []).append(finding.to_dict())
        result: Result = {"recorded": len(log.findings), "location": finding.location}
        if finding.outside_diff:
            result["outside_diff"] = True
        if notes:
            result["note"] = "; ".join(notes)
        return result

    def git_tool(args: Arguments) -> Result:
        return run_git(str(args["args"]), log.target)

    tools = Tools(
        "review",
        [
            Tool(
                "report_finding",
                "Report one review finding. Call once per problem, with the location from the "
                "diff. Severity: blocker (must not merge), major (a bug or risk), minor (worth "
                "fixing), nit (style).",
                FINDING_PARAMS,
                report_finding,
                required=("path", "severity", "title", "body"),
                kind="read",
            ),
            Tool(
                "git",
                "Run a read-only git command in the repository: "
                + ", ".join(GIT_COMMANDS)
                + ". Give the words after `git`, e.g. `log --oneline -5`, `show HEAD~1:src/app.py`, "
                "`blame -L 10,20 src/app.py`, `diff HEAD~1 -- src/app.py`.",
                {"args": {"type": "string", "description": "The command line after `git`"}},
                git_tool,
                required=("args",),
                kind="read",
                preview=lambda a: f"git {a.get('args', '')}",
            ),
        ],
    )
    return tools, log


def add_review_tools(
    context: ToolContext, files: Iterable[str], target: Target, toolbox: Toolbox
) -> FindingLog:
    """Compose the review's toolset (`review_toolset`, for a session's tool `context`) into
    `toolbox`; return the log its tools fill."""
    tools, log = review_toolset(context, files, target)
    toolbox.add_toolset(tools)
    return log


def run_git(line: str, review: Target) -> Result:
    """Run one read-only git command line; a dict with `output`, or `error` saying why not."""
    try:
        words = shlex.split(line)
    except ValueError as e:
        return {"error": f"cannot parse the command line: {e}"}
    if words and words[0] == "git":
        words = words[1:]
    if not words or words[0] not in GIT_COMMANDS:
        return {"error": f"only these git commands are allowed: {', '.join(GIT_COMMANDS)}"}
    sub, rest = words[0], words[1:]
    problem = git_options.refusal(sub, rest, review.root)
    if problem:
        return {"error": problem}
    if sub == "diff":
        shown = _review_diff(rest, review)
        if shown is not None:
            return _bounded(shown)
    if sub == "show" and len(rest) == 1 and rest[0].endswith(".ipynb") and ":" in rest[0]:
        shown = _notebook_blob(rest[0], review)
        if shown is not None:
            return _bounded(shown)
    try:
        proc = git.run(review.root, sub, *SAFE.get(sub, ()), *rest, check=False, timeout=30)
    except ReviewError as e:
        return {"error": str(e)}
    out = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        return {
            "error": proc.stderr.decode("utf-8", errors="replace").strip()
            or f"git exited {proc.returncode}"
        }
    return _bounded(out)


def _review_diff(words: list[str], review: Target) -> str | None:
    """`git diff REV [REV] [-- PATHS]` as the review shows it (notebooks by cell), else None."""
    if not words or any(w.startswith("-") and w != "--" for w in words):
        return None
    cut = words.index("--") if "--" in words else len(words)
    revs, paths = words[:cut], words[cut + 1 :]
    if not revs:
        return None
    if len(revs) == 2 and ".." not in revs[0] + revs[1]:
        revs = [f"{revs[0]}..{revs[1]}"]
    try:
        target = resolve([*revs, "--", *paths] if paths else revs, review.root)
    except ReviewError:
        return None
    if (target.base, target.head, target.paths) == (review.base, review.head, review.paths):
        target = review
    collected = diffs.collect(target, budget=10**9)
    return "".join(f.text for f in collected.files)


def _notebook_blob(spec: str, review: Target) -> str | None:
    """`git show REV:nb.ipynb` as cell sources with ids (no outputs), else None."""
    rev, _, path = spec.partition(":")
    raw = git.blob(review.root, rev or "HEAD", path)
    try:
        found = cell_sources.cells(raw) if raw is not None else None
    except ValueError:
        return None
    if found is None:
        return None
    head = f"{spec}: {len(found)} cells (sources only; outputs and execution counts stripped)\n"
    return head + "".join(f"## {c.label}\n{c.source}\n" for c in found)


def _bounded(text: str) -> Result:
    if len(text) <= MAX_OUTPUT:
        return {"output": text}
    lines = text[:MAX_OUTPUT].count("\n")
    return {
        "output": text[:MAX_OUTPUT],
        "truncated": f"output cut after {MAX_OUTPUT} characters ({lines} lines) of {len(text)}; "
        "narrow the command (a path, -L, --stat)",
    }
