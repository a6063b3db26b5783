"""Globs: the syntax `list` and `grep` accept, matched without backtracking."""

from __future__ import annotations

import random
import re

import pytest

from elelem_kernel.tools.file_tools import list_files
from elelem_kernel.tools.globs import Glob
from elelem_kernel.tools.search import grep
from elelem_kernel.tools.workspace import Workspace


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/deep/a.py", True),
        ("*.py", "a.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/deep/a.py", False),
        ("src/**/*.py", "src/deep/a.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("**/test_?.py", "tests/test_a.py", True),
        ("*.{md,txt}", "docs/a.txt", True),
        ("[ab].csv", "b.csv", True),
        ("[!ab].csv", "b.csv", False),
        ("[!ab].csv", "c.csv", True),
        ("a[!b]c/x", "a/c/x", False),
        ("[a-c]?.txt", "b1.txt", True),
        ("src/**", "src/a/b/c.py", True),
        ("./src/*.py", "src/a.py", True),
        ("*.{md,}", "README.", True),
        ("{a", "{a", True),
        ("[x", "[x", True),
    ],
)
def test_glob(pattern: str, path: str, hit: bool) -> None:
    assert Glob(pattern).match(path) is hit


def reference(pattern: str) -> re.Pattern[str]:
    """The regex translation globs had before (it backtracks), as an oracle on short names."""
    pattern = pattern.strip().removeprefix("./")
    out = [] if "/" in pattern.rstrip("/") else ["(?:.*/)?"]
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i])))
        i += 1
    return re.compile("".join(out) + r"\Z")


def test_same_answers_as_a_regex_on_random_globs() -> None:
    rng = random.Random(3)
    pieces = ["*", "**", "**/", "?", "a", "b", "/", "."]
    letters = "ab/."
    for _ in range(3_000):
        pattern = "".join(rng.choices(pieces, k=rng.randrange(1, 7)))
        glob, regex = Glob(pattern), reference(pattern)
        for _ in range(10):
            path = "".join(rng.choices(letters, k=rng.randrange(0, 9)))
            assert glob.match(path) is bool(regex.match(path)), (pattern, path)


HOSTILE_GLOBS = ["*a*a*a*a*a*a*a*a*c", "**a**a**a**a**a**a**c", "*?*?*?*?*?*?*?*?*c"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern", HOSTILE_GLOBS)
def test_hostile_globs_answer_at_once(ws: Workspace, pattern: str) -> None:
    names = ["a" * 200 + "b", "a" * 100 + "/" + "a" * 100 + "b", "a" * 200 + "c"]
    for name in names:
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text("a\n")
    glob = Glob(pattern)
    assert [glob.match(n) for n in names] == [False, False, True]
    assert list_files(ws, pattern=pattern)["files"] == [names[2]]
    assert grep(ws, "a", glob=pattern, engine="python")["files"] == 1


def test_the_lazy_dfa_stays_bounded() -> None:
    glob = Glob("*[ab]?[ab]?[ab]?[ab]?[ab]?[ab]?[ab]?[ab]?[ab]?[ab]?[ab]?[ab]?c")
    rng = random.Random(5)
    for _ in range(300):
        name = "".join(rng.choices("abxyz", k=80)) + "c"
        glob.match(name)
    assert len(glob._sets) <= 2_000
