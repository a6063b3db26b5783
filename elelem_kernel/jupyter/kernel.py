"""The Elelem kernel: an IPython kernel where every cell is a prompt.

Routing of a cell (first non-blank line):

| cell starts with | runs as |
|---|---|
| `%%py` | Python (the rest of the cell), in the shared namespace |
| `%`, `!` | IPython, unchanged (`%%time`, `!ls`, `%who` ...) |
| `/review [TARGET]` | a review of a diff (`%%elelem review`; the rest of the cell is the focus) |
| `/` | slash commands, one per line (`%elelem /cmd`) |
| anything else | a prompt (`%%elelem` with the cell as body) |

Silent and non-history requests (frontends send internal code that way) go straight to
IPython. Prompts reach IPython as `%%elelem` cells, so execution counts, history, errors
and interrupts behave as for any cell, and the agent's python tool and `%%py` cells share
`user_ns`.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, TypedDict

from ipykernel.ipkernel import IPythonKernel

from elelem_kernel._version import __version__
from elelem_kernel.names import KERNEL_NAME

BANNER = (
    "Elelem: every cell is a prompt to the agent.\n"
    "/help lists the slash commands; %, %% and ! lines reach IPython; "
    "a %%py cell runs Python in the shared namespace."
)


def route(code: str) -> tuple[str, str]:
    """`(kind, code for IPython)`: `python`, `ipython`, `review`, `command`, `prompt`, `empty`."""
    stripped = code.strip()
    if not stripped:
        return "empty", code
    first, _, rest = stripped.partition("\n")
    if first.strip() == "%%py":
        return "python", rest
    if stripped[0] in "%!":
        return "ipython", code
    if first.split()[0] == "/review":
        line = f"review {first[len('/review') :].strip()}".strip()
        return "review", f"%%elelem {line}\n{rest}" if rest.strip() else f"%elelem {line}"
    if stripped[0] == "/":
        lines = [line.strip() for line in stripped.splitlines() if line.strip()]
        return "command", "\n".join(f"%elelem {line}" for line in lines)
    return "prompt", "%%elelem\n" + code


def unwrap(prompt: str) -> str:
    """A console's prompt without the `\\` that ended a line to go on to the next.

    Only for text clients (they send no cell id): in a notebook cell a line ending in a
    backslash is the person's text. Lines in a code fence are kept as typed.
    """
    lines, fenced = [], False
    for line in prompt.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.endswith("\\") and not line.endswith("\\\\"):
            line = line[:-1].rstrip()
        lines.append(line)
    return "\n".join(lines)


class ElelemKernel(IPythonKernel):
    """IPythonKernel that sends prompt cells to the agent (see the module doc)."""

    implementation = KERNEL_NAME
    implementation_version = __version__
    banner = BANNER
    language_info = {
        "name": KERNEL_NAME,
        "version": __version__,
        "mimetype": "text/markdown",
        "file_extension": ".md",
        "codemirror_mode": "markdown",
        "pygments_lexer": "markdown",
        # nbconvert's own: a notebook shared with someone without elelem-kernel must still
        # convert with --to script (--to elelem-markdown is the one whose fences fit prompts)
        "nbconvert_exporter": "markdown",
    }
    help_links = [
        {"text": "Python", "url": "https://docs.python.org/3/"},
        {"text": "IPython", "url": "https://ipython.readthedocs.io/"},
    ]

    def __init__(self, **kwargs: Any):
        _enter_working_dir()
        super().__init__(**kwargs)
        from elelem_kernel.jupyter.magics import (
            load,  # lazy: the magic needs the shell this kernel made
        )

        load(self.shell)
        from elelem_kernel.jupyter import restore_ahead  # lazy, as the magic: small

        if self.shell is not None:  # ipykernel made it in __init__ above
            restore_ahead.start(functools.partial(_notebook_file, self.shell.user_ns))

    async def do_execute(
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
        *,
        cell_meta: dict[str, Any] | None = None,
        cell_id: str | None = None,
    ) -> dict[str, Any]:
        if not silent and store_history:
            kind, code = route(code)
            if kind == "prompt" and cell_id is None and allow_stdin:
                code = unwrap(code)
        reply: dict[str, Any] = await super().do_execute(  # ipykernel has no types
            code,
            silent,
            store_history,
            user_expressions,
            allow_stdin,
            cell_meta=cell_meta,
            cell_id=cell_id,
        )
        return reply

    def do_complete(self, code: str, cursor_pos: int | None) -> Any:
        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        kind, _ = route(code)
        if kind == "command":
            return self._complete_command(code, cursor_pos)
        if kind in ("python", "ipython"):
            return super().do_complete(code, cursor_pos)
        return _completions([], cursor_pos, cursor_pos)

    def do_is_complete(self, code: str) -> dict[str, Any]:  # type: ignore[override]
        """Whether a console should run `code` at Enter, by IPython's rules.

        `%%py` and other `%%` cells, like IPython's cell magics, end with an empty line;
        `%` and `!` lines are IPython's to judge; slash commands are one line each; a
        prompt runs at Enter when it is one line, and a prompt of several lines (started
        by an Enter after an unfinished first line, e.g. one ending in `:` or `\\`) ends
        with an empty line.
        """
        kind, _ = route(code)
        if kind in ("python", "ipython"):
            judged: dict[str, Any] = super().do_is_complete(code)  # ipykernel has no types
            return judged
        if kind != "prompt":
            return {"status": "complete"}
        lines = code.split("\n")
        if len(lines) == 1:
            text = code.rstrip()
            if text.endswith(("\\", ":")):
                return {"status": "incomplete", "indent": ""}
            return {"status": "complete"}
        return {"status": "complete" if not lines[-1].strip() else "incomplete", "indent": ""}

    def _complete_command(self, code: str, cursor_pos: int) -> CompleteReply:
        from elelem_kernel.jupyter.shell_front import (
            front_for,  # lazy: the agent loads only when a prompt needs it
        )

        start = code.rfind("\n", 0, cursor_pos) + 1
        line = code[start:cursor_pos]
        offset = len(line) - len(line.lstrip())
        try:
            session = front_for(self.shell).get_session()
            matches = session.commands.complete(session, line.lstrip())
        except Exception:
            matches = []
        return _completions(matches, start + offset, cursor_pos)


def _notebook_file(user_ns: dict[str, object]) -> Path | None:
    """The notebook file a first restore would read (restore.py's `find_notebook`)."""
    from elelem_kernel.jupyter.restore import find_notebook  # on the read-ahead's thread

    return find_notebook(user_ns, os.environ)[0]


def _enter_working_dir() -> None:
    """Start in `KERNEL_WORKING_DIR` when a gateway names one (Kernel Gateway does not)."""
    folder = os.environ.get("KERNEL_WORKING_DIR")
    if folder and os.path.isdir(folder):
        os.chdir(folder)


class CompleteReply(TypedDict):
    """A `complete_reply` of the Jupyter messaging protocol."""

    status: str
    matches: list[str]
    cursor_start: int
    cursor_end: int
    metadata: dict[str, object]


def _completions(matches: list[str], start: int, end: int) -> CompleteReply:
    return {
        "status": "ok",
        "matches": matches,
        "cursor_start": start,
        "cursor_end": end,
        "metadata": {},
    }
