"""What fits a small context window: the fixed part, each tool result, a reply.

A local model's window may be 2k or 8k tokens, and the session knows it (and its own
estimates) before sending. So:
- the fixed part of every request (system prompt and tool descriptions) is checked first:
  when it alone does not fit, nothing is sent, and the refusal names the ways out
  (`check_fixed`);
- a tool result is bounded by what is left of the window after this turn's own messages,
  with the usual "showing X of Y" line saying how to ask for less (`bound_result`);
- a reply stopped because prompt and reply filled the window is told apart from one cut
  at the output limit (`context_full`): raising `max_tokens` would not help it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from elelem_kernel.agent.context import estimate, known, short
from elelem_kernel.agent.toolbox import MODES, Toolbox
from elelem_kernel.errors import ConfigError
from elelem_kernel.events import Message, Usage
from elelem_kernel.text import showing
from elelem_kernel.tools.declaration import Result

if TYPE_CHECKING:
    from elelem_kernel.agent.model_facts import ModelFacts
    from elelem_kernel.agent.record import CompactionEntry
    from elelem_kernel.images import ImageEntry


class Sizing(Protocol):
    """What the fixed part of a request is read from (a `Session`)."""

    facts: ModelFacts
    toolbox: Toolbox

    @property
    def mode(self) -> str:
        """The mode whose tools are offered."""

    def messages(
        self,
        prompt: str,
        cell: str | None = None,
        pending: CompactionEntry | None = None,
        images: list[ImageEntry] | None = None,
        environment: Iterable[str] = (),
    ) -> list[Message]:
        """The request for `prompt`: the system prompt first."""


#: Tokens kept free for the reply when asking whether a request fits: an eighth of the
#: window, at most this many.
REPLY_ROOM = 1_024
#: A reply whose prompt and output come this close to the window (share) filled it.
FULL_SHARE = 0.99
#: Tokens a bounded tool result keeps at least, however full the window.
MIN_RESULT_TOKENS = 100


def reply_room(window: int) -> int:
    """The tokens a request leaves free for its reply in a window of `window` tokens."""
    return min(window // 8, REPLY_ROOM)


def fits(tokens: int, window: int) -> bool:
    """Whether a request of `tokens` fits `window` with room for a reply."""
    return tokens + reply_room(window) <= window


def fixed_tokens(session: Sizing, mode: str | None = None, environment: Iterable[str] = ()) -> int:
    """The estimated tokens of what every request of `mode` sends before any word of the
    person's: the system prompt (with the turn's `environment`) and the tool descriptions."""
    system = session.messages("", environment=environment)[:1]
    return session.facts.estimate(system, session.toolbox.specs(mode or session.mode))


def check_fixed(session: Sizing, environment: Iterable[str] = ()) -> None:
    """ConfigError, before anything is sent, when the system prompt and the tool
    descriptions alone do not fit a known window; it says what would."""
    window, source = session.facts.window()
    if not known(source):
        return
    environment = tuple(environment)
    fixed = fixed_tokens(session, environment=environment)
    if fixed < window:
        return
    smaller = [
        f"--mode {m} (~{short(size)})"
        for m in MODES
        if m != session.mode
        and (size := fixed_tokens(session, m, environment)) < window - reply_room(window)
    ]
    modes = (
        f"a mode with fewer tools: {', '.join(smaller)}, or /mode in a conversation; "
        if smaller
        else ""
    )
    raise ConfigError(
        f"nothing was sent: the system prompt and the tool descriptions of {session.mode} "
        f"mode are ~{short(fixed)} tokens, more than the model's context window of "
        f"{short(window)} tokens ({source}). Ways out: {modes}a larger window on the "
        "server (llama-server -c 8192, Ollama's num_ctx); or, if the window is larger than "
        "that, say so with -o context_window=N"
    )


def result_room(
    facts: ModelFacts, own: Sequence[Message], tools: Sequence[Mapping[str, object]]
) -> int:
    """Tokens (uncalibrated estimate) a tool result may take: what is left of the window
    after the fixed part, `own` (this turn's messages so far), the reply's room and a
    summary's. The older turns do not count: they are compacted to make room."""
    window = facts.window()[0]
    used = facts.estimate(own, tools)
    left = window - reply_room(window) - used - window // 10
    factor = facts.calibration.get(facts.conversation.id, 1.0)
    return max(int(left / factor), MIN_RESULT_TOKENS)


def bound_result(result: Result, tokens: int) -> Result:
    """`result` cut to about `tokens` (estimated, as the model is sent it), saying what
    it shows of what and how to ask for less; unchanged when it fits."""
    size = _tokens(result)
    if size <= tokens:
        return result
    texts = [k for k, v in result.items() if isinstance(v, str)]
    key = max(texts, key=lambda k: len(result[k])) if texts else ""
    if not key or _tokens({**result, key: ""}) > tokens:  # the bulk is not one text
        whole = json.dumps(result, ensure_ascii=False, default=str)
        result, key = {"ok": result.get("ok", True), "result": whole}, "result"
    keep = len(result[key]) * tokens // size
    out = result
    for _ in range(5):  # the estimate is not linear in characters: shrink until it fits
        out = _cut(result, key, keep)
        if _tokens(out) <= tokens:
            break
        keep = keep * 4 // 5
    return out


def _tokens(result: Result) -> int:
    """The estimated tokens of `result` as a tool message's JSON content."""
    return estimate([{"content": json.dumps(result, ensure_ascii=False, default=str)}])


def _cut(result: Result, key: str, keep: int) -> Result:
    """`result` with its text `key` cut to `keep` characters, and the line that says so."""
    lines = result.get("lines")
    if key == "content" and isinstance(lines, str) and re.fullmatch(r"\d+-\d+", lines):
        if isinstance(result.get("total_lines"), int):  # a `read`: fewer whole lines
            return _fewer_lines(result, keep)
    text = result[key]
    out = {**result, key: text[:keep]}
    out["truncated"] = showing(
        f"{keep:,}",
        f"{len(text):,}",
        f"characters of {key}",
        "the rest does not fit the context window: narrow it (an offset, a pattern, a path, "
        "fewer lines of output)",
    )
    return out


def _fewer_lines(result: Result, keep: int) -> Result:
    """A `read` result with only the lines that fit `keep` characters, and `read`'s own
    line saying which lines it shows and how to ask for the next."""
    from elelem_kernel.tools.file_tools import lines_result  # read's shape; only when a read is cut

    first = int(str(result["lines"]).split("-")[0])
    shown: list[str] = []
    size = 0
    for line in str(result["content"]).split("\n"):
        if shown and size + len(line) + 1 > keep:
            break
        shown.append(line[:keep])
        size += len(line) + 1
    rest = {k: v for k, v in result.items() if k != "truncated"}
    out = {**rest, **lines_result(str(result.get("path")), shown, first, result["total_lines"])}
    if "truncated" in out:
        out["truncated"] += " (the context window has room for no more now)"
    return out


def context_full(
    ending: Mapping[str, object], usage: Usage, window: int | None, stop: str
) -> str | None:
    """Why a reply that ended at a limit (`stop` "max_tokens") ended at the window, not the
    output limit: the provider says so, or its prompt and output filled the `window`
    (None: not known, only assumed); else None."""
    if stop != "max_tokens":
        return None
    used = int(usage.get("input") or 0) + int(usage.get("output") or 0)
    filled = window is not None and used >= FULL_SHARE * window
    if ending.get("reason") != "model_context_window_exceeded" and not filled:
        return None
    size = f" of {window:,} tokens" if window else ""
    counted = f" (the request and the reply, {used:,} tokens)" if used else ""
    return (
        f"the model's context window{size} is full{counted}; raising max_tokens would not "
        "help. Make room with /compact or /clear (a new conversation), or give the server "
        "a larger window (llama-server -c, -o context_window=N)"
    )
