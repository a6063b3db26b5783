"""Globs over `/`-separated relative paths, matched in time linear in the path's length.

A glob from the model (`list`'s pattern, `grep`'s glob) used to become a regex whose
nested `[^/]*` runs backtrack: `*a*a*a*a*a*a*c` against a long name took seconds to
forever, holding the GIL. Here the glob becomes a small automaton (one state per pattern
position) that is run as a DFA built lazily, one step per character of the path: no
backtracking, whatever the pattern.

Syntax: `*` (any characters but `/`), `?` (one character but `/`), `[abc]`, `[a-z]`,
`[!abc]` (one character but `/`), `{md,txt}` (one of these literal words), `**` (anything,
`/` included) and `**/` (any number of folders, none included). As in ripgrep and
.gitignore, a pattern without a `/` matches the file name at any depth.
"""

from __future__ import annotations

from collections.abc import Callable

Test = Callable[[str], bool]
#: DFA states kept before the cache starts over (bounds memory for odd patterns).
MAX_STATES = 2_000


class _Automaton:
    """States with epsilon moves and character moves; state 0 starts, `accept` ends."""

    def __init__(self) -> None:
        self.moves: list[list[tuple[Test, int]]] = [[]]
        self.free: list[list[int]] = [[]]

    def new(self) -> int:
        self.moves.append([])
        self.free.append([])
        return len(self.moves) - 1

    def step(self, at: int, test: Test) -> int:
        """A move from `at` on one character passing `test`; the state it leads to."""
        to = self.new()
        self.moves[at].append((test, to))
        return to

    def word(self, at: int, text: str, to: int) -> None:
        """Moves from `at` through the characters of `text`, ending in `to`."""
        for c in text[:-1]:
            at = self.step(at, c.__eq__)
        if text:
            self.moves[at].append((text[-1].__eq__, to))
        else:
            self.free[at].append(to)


def _not_slash(c: str) -> bool:
    return c != "/"


def _any(c: str) -> bool:
    return True


def _class(body: str) -> Test:
    """The test for a `[...]` body: ranges, `!` or `^` to negate, never `/`."""
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    singles: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            i += 1
            c = body[i]
        if i + 2 < len(body) and body[i + 1] == "-":
            ranges.append((c, body[i + 2]))
            i += 3
            continue
        singles.add(c)
        i += 1

    def test(c: str) -> bool:
        inside = c in singles or any(low <= c <= high for low, high in ranges)
        return c != "/" and inside != negate

    return test


class Glob:
    """A compiled glob: `Glob("src/**/*.py").match("src/a/b.py")`."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self._nfa, self._accept = _compile(pattern)
        self._reset()

    def _reset(self) -> None:
        self._sets: list[frozenset[int]] = []
        self._index: dict[frozenset[int], int] = {}
        self._next: list[dict[str, int]] = []
        self._final: list[bool] = []
        self._start = self._state(self._closure({0}))

    def match(self, path: str) -> bool:
        """Whether the whole of `path` matches."""
        state = self._start
        for c in path:
            following = self._next[state].get(c)
            if following is None:
                following = self._move(state, c)
            if following < 0:
                return False
            state = following
        return self._final[state]

    def _move(self, state: int, c: str) -> int:
        found = {to for s in self._sets[state] for test, to in self._nfa.moves[s] if test(c)}
        if not found:
            self._next[state][c] = -1
            return -1
        if len(self._sets) >= MAX_STATES:
            start = self._sets[state]
            self._reset()
            state = self._state(start)
        following = self._state(self._closure(found))
        self._next[state][c] = following
        return following

    def _closure(self, states: set[int]) -> frozenset[int]:
        pending, seen = list(states), set(states)
        while pending:
            for to in self._nfa.free[pending.pop()]:
                if to not in seen:
                    seen.add(to)
                    pending.append(to)
        return frozenset(seen)

    def _state(self, states: frozenset[int]) -> int:
        index = self._index.get(states)
        if index is None:
            index = self._index[states] = len(self._sets)
            self._sets.append(states)
            self._next.append({})
            self._final.append(self._accept in states)
        return index

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"


def _compile(pattern: str) -> tuple[_Automaton, int]:
    """The automaton of a glob and its accepting state."""
    nfa = _Automaton()
    pattern = pattern.strip().removeprefix("./")
    at = 0
    if "/" not in pattern.rstrip("/"):
        at = _folders(nfa, at)
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            at = _folders(nfa, at)
            i += 3
            continue
        if pattern.startswith("**", i):
            at = _loop(nfa, at, _any)
            i += 2
            continue
        if c == "*":
            at = _loop(nfa, at, _not_slash)
        elif c == "?":
            at = nfa.step(at, _not_slash)
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            at = nfa.step(at, _class(pattern[i + 1 : end]))
            i = end
        elif c == "{" and (end := pattern.find("}", i)) != -1:
            join = nfa.new()
            for option in pattern[i + 1 : end].split(","):
                nfa.word(at, option, join)
            at = join
            i = end
        else:
            at = nfa.step(at, c.__eq__)
        i += 1
    return nfa, at


def _loop(nfa: _Automaton, at: int, test: Test) -> int:
    """Any number of characters passing `test`, in a state of its own (so loops never mix)."""
    here = nfa.new()
    nfa.free[at].append(here)
    nfa.moves[here].append((test, here))
    return here


def _folders(nfa: _Automaton, at: int) -> int:
    """`(?:.*/)?`: nothing, or anything ending with a `/`."""
    after = nfa.new()
    nfa.free[at].append(after)
    inside = _loop(nfa, at, _any)
    nfa.moves[inside].append(("/".__eq__, after))
    return after
