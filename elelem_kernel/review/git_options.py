"""What the review's `git` tool lets through: an allowlist of options per subcommand.

Model text becomes a git command line, and review runs with no approval, so every option
must be known to be read-only and to take no file or program argument. git accepts unique
prefixes of long options (`--cont` is `--contents`) and attached values (`-O"cmd"`,
`-fFILE`, `--opt=value`), so a denylist cannot hold: here only the exact spellings listed
pass, each with how it takes a value. Positional words (revisions, paths) and everything
after `--` must stay inside the repository, as the file tools' paths do.

Spec words: `--x` / `-x` a flag; `--x=` a value, attached only (`--x=V`); `-x=` a value,
attached or next (`-xV`, `-x V`); `--x[=]` / `-x[=]` a flag with an optional attached value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from elelem_kernel.errors import ToolError
from elelem_kernel.tools.workspace import Workspace

FLAG, VALUE, OPTIONAL = "flag", "value", "optional"

#: How diff, log and show print a change.
DIFF_OUTPUT = """
-p -u --patch -s --no-patch --raw --patch-with-raw --patch-with-stat
--stat[=] --numstat --shortstat --compact-summary --summary --dirstat[=]
--name-only --name-status --check --full-index --binary --abbrev[=] -z
-U= --unified= --inter-hunk-context= -W --function-context
--minimal --patience --histogram --diff-algorithm= --indent-heuristic --no-indent-heuristic
-w --ignore-all-space -b --ignore-space-change --ignore-space-at-eol --ignore-cr-at-eol
--ignore-blank-lines --word-diff[=] --no-color --no-renames -M[=] --find-renames[=]
-C[=] --find-copies[=] --find-copies-harder -B[=] --break-rewrites[=] -D
--irreversible-delete -l= --diff-filter= -R -a --text --no-prefix
-S= -G= --pickaxe-all --pickaxe-regex --find-object= --no-ext-diff --no-textconv
"""

#: Which commits log and show walk, and how they print them.
LOG = """
--oneline --graph --decorate[=] --no-decorate --first-parent --no-merges --merges
--reverse --all --follow --full-history --topo-order --date-order --author-date-order
--left-right --cherry-pick --cherry-mark --cherry --ancestry-path --simplify-by-decoration
--boundary --parents --children --source --abbrev-commit --no-abbrev-commit --no-notes
--relative-date -i --regexp-ignore-case --all-match --invert-grep -E --extended-regexp
-F --fixed-strings -P --perl-regexp --basic-regexp -n= --max-count= --skip= --since=
--after= --until= --before= --author= --committer= --grep= --format= --pretty[=] --date=
--max-parents= --min-parents= --no-min-parents --no-max-parents -L= -m -c --cc
--diff-merges= --remove-empty --no-walk[=] --do-walk
"""

SPECS: dict[str, str] = {
    "diff": DIFF_OUTPUT + "--cached --staged --merge-base --exit-code --quiet",
    "log": DIFF_OUTPUT + LOG,
    "show": DIFF_OUTPUT + LOG,
    "blame": """
        -L= -l -t -s -e --show-email -n --show-number -f --show-name -w -M[=] -C[=] -p
        --porcelain --line-porcelain --incremental -c --root --show-stats --abbrev[=]
        --date= --first-parent --reverse -b --ignore-rev= --no-textconv --encoding=
        """,
    "grep": """
        -i --ignore-case -I -w --word-regexp -v --invert-match -h -H --full-name
        -E --extended-regexp -G --basic-regexp -F --fixed-strings -P --perl-regexp
        -n --line-number --column -l --files-with-matches --name-only -L
        --files-without-match -c --count -a --text -o --only-matching -q --quiet
        --all-match --and --or --not -e= -A= -B= -C= --context= --after-context=
        --before-context= -W --function-context -p --show-function --max-depth= --cached
        --break --heading -z --null --no-color -m= --max-count= --no-textconv
        -r --recursive --no-recursive
        """,
    "status": """
        -s --short -b --branch --porcelain[=] --long -u[=] --untracked-files[=]
        --ignored[=] -z --no-renames --find-renames[=]
        --show-stash --ahead-behind --no-ahead-behind
        """,
    "ls-files": """
        -c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage
        -u --unmerged -k --killed -z -t -v -f --full-name --exclude-standard --directory
        --no-empty-directory --eol --deduplicate --abbrev[=] -x= --exclude= --error-unmatch
        --format=
        """,
}

#: Subcommands where `-NUM` is an option (a commit count; grep: lines of context).
NUMBERS = frozenset({"log", "show", "grep"})
COMMANDS = tuple(SPECS)


@dataclass(frozen=True)
class Allowed:
    """The options of one subcommand: long spellings and short letters, with their kinds."""

    long: dict[str, str]
    short: dict[str, str]
    text: str  #: the list as the model reads it in a refusal

    @classmethod
    def parse(cls, spec: str) -> Allowed:
        long: dict[str, str] = {}
        short: dict[str, str] = {}
        for word in spec.split():
            kind = OPTIONAL if word.endswith("[=]") else VALUE if word.endswith("=") else FLAG
            name = word.removesuffix("[=]").removesuffix("=")
            if name.startswith("--"):
                long[name] = kind
            else:
                short[name[1:]] = kind
        return cls(long, short, " ".join(_shown(w) for w in spec.split()))


def _shown(word: str) -> str:
    if word.endswith("[=]"):
        return word.removesuffix("[=]") + ("[=V]" if word.startswith("--") else "[V]")
    if word.endswith("="):
        return word + "V" if word.startswith("--") else word[:-1] + " V"
    return word


ALLOWED = {command: Allowed.parse(spec) for command, spec in SPECS.items()}


def refusal(command: str, words: Sequence[str], root: Path) -> str | None:
    """Why `git command words...` may not run in the repository at `root`, or None."""
    allowed = ALLOWED.get(command)
    if allowed is None:
        return f"only these git commands are allowed: {', '.join(COMMANDS)}"
    workspace = Workspace(root)
    pattern_pending = command == "grep"
    options_end = False
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not options_end and word in ("--", "--end-of-options"):
            options_end = True
            continue
        if not options_end and word.startswith("-") and word != "-":
            if command in NUMBERS and word[1:].isdigit():
                continue
            problem, used_next, gave_pattern = _option(command, allowed, word, words[i:])
            if problem:
                return problem
            i += used_next
            pattern_pending &= not gave_pattern
            continue
        if command == "grep" and not options_end and word in ("(", ")"):
            continue
        if pattern_pending and not options_end:
            pattern_pending = False  # grep's first positional word is its pattern
            continue
        try:
            workspace.resolve(word)
        except ToolError as e:
            return f"git {command}: {e}"
    return None


def _option(
    command: str, allowed: Allowed, word: str, rest: Sequence[str]
) -> tuple[str | None, int, bool]:
    """Check one option word: (why not, how many next words it used, gave grep's -e)."""
    if word.startswith("--"):
        name, eq, _ = word.partition("=")
        kind = allowed.long.get(name)
        if kind is None:
            return _not_allowed(command, allowed, name), 0, False
        if kind == FLAG and eq:
            return f"git {command}: {name} takes no value (got {word})", 0, False
        if kind == VALUE and not eq:
            return f"git {command}: write {name}=VALUE in one word", 0, False
        return None, 0, False
    for j, letter in enumerate(word[1:], 1):
        kind = allowed.short.get(letter)
        if kind is None:
            shown = f"-{letter}" + (f" (in {word})" if len(word) > 2 else "")
            return _not_allowed(command, allowed, shown), 0, False
        if kind == FLAG:
            continue
        pattern = command == "grep" and letter == "e"
        if kind == VALUE and j == len(word) - 1:
            if not rest:
                return f"git {command}: -{letter} needs a value", 0, False
            return None, 1, pattern
        return None, 0, pattern  # the rest of the word is the value
    return None, 0, False


def _not_allowed(command: str, allowed: Allowed, option: str) -> str:
    return (
        f"git {command}: option {option} is not allowed in a read-only review. Only these "
        "exact spellings pass (abbreviations of long options are refused; V is a value: "
        f"a number, a pattern, a revision, a format): {allowed.text}"
    )
