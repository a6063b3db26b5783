"""The notebook front of one IPython shell: its session, and how one prompt runs.

Shared by the `%%elelem` magic and the Elelem kernel (whose prompt cells go through the
magic). One session per shell, created on first use (so loading the extension imports
nothing heavy). A prompt shows a live view, picks an approval channel, runs the turn on
the private loop, and always freezes the view into the static output, also on error and
on interrupt. An interrupted turn then raises `TurnInterrupted`, so a "Run all" stops
there as it would for any interrupted cell; a turn stopped by a budget raises
`BudgetStopped` (an error reply: Run All, papermill and nbclient stop there, as for any
failing cell).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import weakref
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elelem_kernel.agent.approval import HOW_TO_ALLOW
from elelem_kernel.agent.commands import check_tools
from elelem_kernel.agent.front import TurnSettings
from elelem_kernel.agent.record import unfinished
from elelem_kernel.errors import BadInput, BudgetStopped, ConfigError, TurnInterrupted
from elelem_kernel.jupyter.approval_channels import approver_for, choose_channel
from elelem_kernel.jupyter.execute_request import ExecuteRequest
from elelem_kernel.names import KERNEL_NAME
from elelem_kernel.render.cell_view import new_view
from elelem_kernel.render.markdown import neutralise, no_blank_lines, to_html
from elelem_kernel.render.markdown_text import to_text
from elelem_kernel.sync import LoopThread
from elelem_kernel.visible import visible

if TYPE_CHECKING:
    from elelem_kernel.agent.record import TurnRecord
    from elelem_kernel.agent.session import Session
    from elelem_kernel.agent.turn import TurnResult

#: What `/help` says in the Elelem kernel about prompts of several lines.
MULTI_LINE = (
    "A prompt of several lines: in a notebook, type it in one cell. In `jupyter console` "
    "end a line with `\\` (or `:`) and Enter to go on; an empty line then runs it. "
    "In qtconsole Ctrl+Enter starts a new line and Shift+Enter runs the prompt."
)
#: The same for the magic, whose prompt is a cell body.
MAGIC_MULTI_LINE = (
    "A prompt of several lines is the body of a `%%elelem` cell. In `jupyter console` type "
    "`%%elelem`, Enter, the prompt's lines, then an empty line to run it."
)

_FRONTS: weakref.WeakKeyDictionary[Any, ShellFront] = weakref.WeakKeyDictionary()
_FRONTS_LOCK = threading.Lock()  # comm handlers (the page's undo) may run on a subshell


def front_for(ip: Any) -> ShellFront:
    """The front of shell `ip` (made on first use, once, whichever thread asks first)."""
    with _FRONTS_LOCK:
        front = _FRONTS.get(ip)
        if front is None:
            front = _FRONTS[ip] = ShellFront(ip)
        return front


class ShellFront:
    """Session, private loop and turn runner for one IPython shell."""

    def __init__(self, ip: Any):
        self.ip = ip
        quiet_subshell_teardown()
        self.session: Session | None = None
        self.runner = LoopThread("elelem-turns")  #: kept for the kernel's life: providers
        #: may hold HTTP clients bound to its loop
        self.announced = False
        self.placed = False
        #: The notice of the default provider, said with the first prompt's turn.
        self.pending_notice: str | None = None
        self.approvals: dict[str, Any] = {}  #: what the approval channels learnt
        self.untold: list[str] = []  #: lines about skipped plugins not shown in a cell yet
        self.restored: str | None = None  #: "restored 3 turns from nb.ipynb", to show live

    # -- session ----------------------------------------------------------------------

    def get_session(self) -> Session:
        """The shell's session, created with the default provider on first use."""
        restore = _restore_module()
        notebook = self.request().notebook
        if restore is not None and notebook:  # VS Code names the notebook only in its cell ids
            self.ip.user_ns[restore.VSCODE_FILE] = notebook
        try:
            if self.session is None:
                from elelem_kernel.agent.registry import set_notify
                from elelem_kernel.assembly.sessions import (
                    new_session,  # lazy: the agent loads at the first prompt
                )

                previous = set_notify(self.untold.append)  # skipped project plugins
                try:
                    session = new_session(
                        namespace=self.ip.user_ns, workspace=self._frontend_folder(), front=self
                    )
                finally:
                    set_notify(previous)
                self._wire(session)
                self.session = session
            return self.session
        finally:
            self._say_untold()

    def _say_untold(self) -> None:
        """Say the lines about skipped project plugins in the cell being run (a completion
        request that made the session has no cell to show them: the next cell does)."""
        if self.untold and self.request().msg_type == "execute_request":
            lines, self.untold[:] = list(self.untold), []
            self.say("\n\n".join(lines))

    def _wire(self, session: Session) -> None:
        """The front's commands and help lines in the session's command table."""
        session.commands.notes.append(MULTI_LINE if self._elelem() else MAGIC_MULTI_LINE)
        session.commands.add(
            "undo",
            "revert the last turn's changes to files and open-notebook cells, where unchanged "
            "since (Python variables cannot be restored)",
            lambda _session, _args: self.undo(),
        )
        session.commands.add(
            "redo",
            "apply again the turn /undo undid last, where nothing changed since",
            lambda _session, _args: self.undo(redo=True),
        )
        restore = _restore_module()
        if restore is not None:
            try:
                restore.register_commands(session, self.ip.user_ns, dict(os.environ))
            except Exception as error:
                self.say(f"warning: notebook commands unavailable: {error}")

    def _frontend_folder(self) -> Path | None:
        """The notebook's folder as the frontend told it, when this kernel can see it and
        is still in the folder it started in: a person who moved the kernel (`os.chdir`,
        `%cd`) means that folder, which `find_workspace` then takes."""
        restore = _restore_module()
        frontend = self.ip.user_ns.get(restore.FRONTEND_KEY) if restore else None
        path = frontend.get("path") if isinstance(frontend, dict) else None
        folder = Path(path).parent if path else None
        if folder is None or not folder.is_dir() or self._moved():
            return None
        return folder

    def _moved(self) -> bool:
        """Whether the kernel left the folder it started in (IPython's `_dh[0]`)."""
        started = getattr(getattr(self.ip, "history_manager", None), "dir_hist", None) or []
        try:
            return bool(started) and Path.cwd().resolve() != Path(started[0]).resolve()
        except OSError:  # the current folder was removed
            return True

    def notebook_path(self) -> Path | None:
        """The notebook open in the frontend, when it can be known."""
        restore = _restore_module()
        try:
            return restore.find_notebook(self.ip.user_ns, dict(os.environ))[0] if restore else None
        except Exception:  # an unreadable setting must not stop the prompt
            return None

    def propose_cell(self, source: str) -> None:
        """Offer `source` as the next cell (the frontend's set_next_input payload)."""
        self.ip.set_next_input(source, replace=False)

    # -- what the session gets of this front (`agent/front.Front`) -----------------

    def open_notebook(self) -> Path | None:
        """The notebook open in the frontend, for the notebook tools."""
        return self.notebook_path()

    def notice(self, text: str) -> None:
        """Kept until the first prompt's turn says which provider answers (`_announce`)."""
        self.pending_notice = text

    def turn_settings(self, approver: Any = None, live_notebook: Any = None) -> TurnSettings:
        """A turn's settings in this front's words: how to allow a call and raise a
        budget here, the environment facts, and the turn's `approver` and link."""
        where = "kernel" if self._elelem() else "magic"
        return TurnSettings(
            approver=approver,
            allow_hint=HOW_TO_ALLOW[where],
            budget_hint=BUDGET_HINT[where],
            environment=(_notebook_fact(live_notebook is not None), WHERE[where]),
            live_notebook=live_notebook,
        )

    def _elelem(self) -> bool:
        """Whether this is the Elelem kernel (not the magic in another kernel)."""
        kernel = getattr(self.ip, "kernel", None)
        return getattr(kernel, "implementation", None) == KERNEL_NAME

    # -- running ----------------------------------------------------------------------

    def request(self) -> ExecuteRequest:
        """The request being handled, read once by each entry point and passed on (empty
        outside a kernel)."""
        get_parent = getattr(self.ip, "get_parent", None)
        try:
            return ExecuteRequest.parse(get_parent() if get_parent else None)
        except Exception:  # a shell whose get_parent fails is no kernel's
            return ExecuteRequest()

    def run_prompt(
        self,
        prompt: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        mode: str | None = None,
        system_prompt: str | None = None,
        new: bool = False,
        cell: str | None = None,
        options: dict[str, Any] | None = None,
        allow: list[str] | None = None,
        extras: dict[str, Any] | None = None,
    ) -> Any:
        """Run one turn of `prompt` in the notebook's conversation; the TurnResult.

        Options and `allow` (tools that run without asking) apply to this turn only; `new`
        starts a fresh conversation first; `extras`: fields the turn's record gets.
        """
        session = self.get_session()
        allow = _allowed(session, allow)
        request = self.request()
        cell = self._before_turn(session, request, cell, announce=provider is None, new=new)
        view = None
        link = None
        result = None
        interrupted = False
        scope = ExitStack()  # this turn's provider, options, model, mode and system prompt
        try:
            overrides: dict[str, Any] = {"provider": provider, "model": model, "mode": mode}
            overrides |= {"system_prompt": system_prompt, "options": options}
            _for_this_turn(session, scope, allow or [], overrides)
            self.runner.submit(_ask_window_ahead(session))
            # the link first: the page says hello at once, not after making the view's
            # widgets (a fresh page's first are slow), and the first read waits for it
            link = self._link_notebook(request, cell)
            view = new_view(self.watcher(request), session.provider_name, session.model)
            if link is not None:  # the live view says when a diff there waits
                link.watcher = getattr(view, "person", None)
            if self.restored:
                view({"type": "notice", "text": self.restored})
                self.restored = None
            settings = self.turn_settings(self._approver(view, request, page=link), link)
            turn = session.turn(prompt, view, cell, settings, extras)
            result, interrupted = self.runner.run(turn)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if link is not None:
                link.close()
            scope.close()
            if view is not None:
                view.freeze(_record_of(result, session, prompt, cell, interrupted))
        if interrupted:
            if getattr(result, "stop", "interrupted") != "interrupted":
                raise TurnInterrupted("the stop came as the turn ended; its output above is whole")
            raise TurnInterrupted()
        if getattr(result, "stop", None) == "budget":
            raise BudgetStopped()
        return result

    def _before_turn(
        self,
        session: Session,
        request: ExecuteRequest,
        cell: str | None,
        *,
        announce: bool,
        new: bool,
    ) -> str | None:
        """Ready the session for a prompt's turn; the turn's cell id.

        Restores the notebook's turns (up to this cell), forgets deleted cells' turns, says
        once which provider answers (when `announce`: the default one) and where the
        workspace is, and starts a fresh conversation when `new`.
        """
        if cell is None:
            cell = request.cell_id
        self._restore(session, request, cell)
        _drop_deleted(session, request.deleted_cells)
        if announce:  # the notice is about the default provider
            self._announce(session, request)
        self._place(session, request)
        if new:
            session.conversations.new()
        return cell

    def run_review(
        self,
        target: list[str] | None,
        *,
        focus: str | None = None,
        severity: str | None = None,
        **options: Any,
    ) -> Any:
        """Review `target` (a diff) in one turn; None when there is nothing to review."""
        from elelem_kernel.review.run import prepare  # lazy: only review cells need it

        review = prepare(self.get_session(), target, focus=focus, severity=severity)
        if review is None:
            return None
        with review:
            return self.run_prompt(review.prompt, extras=review.extras, **options)

    def watcher(self, request: ExecuteRequest) -> str:
        """Who watches this cell run: `widgets`, `text`, or `nobody` (output at the end).

        Notebook frontends send the cell id with each request (JupyterLab, Notebook 7, VS
        Code) and render widgets. A client that allows stdin but sends no cell id
        (jupyter console, qtconsole) is a person at a text prompt: widgets would show as
        their repr there, so the turn streams as text. Headless runners (nbclient,
        papermill, `jupyter execute`) do neither, and would save every widget's state in
        the notebook.
        """
        if getattr(self.ip, "kernel", None) is None:
            return "nobody"
        if request.cell_id:
            return "widgets"
        return "text" if request.allow_stdin else "nobody"

    def command(self, line: str) -> str:
        """Run a slash command line; its Markdown answer."""
        name, _, args = line.strip().partition(" ")
        if name == "/trust" and self.session is None:
            # before any session: its default provider may come from the plugin to trust
            from elelem_kernel.agent.commands import trust_command
            from elelem_kernel.assembly.sessions import find_workspace

            try:
                return trust_command(args.strip(), find_workspace())
            except BadInput as error:
                return f"`/trust`: {error}"
        session = self.get_session()
        request = self.request()
        # as for prompts: a headless run from the top restores only the turns above this cell
        self._restore(session, request, request.cell_id)
        self._announce(session, request)
        return session.command(line)

    def status(self) -> str:
        """Markdown status: provider, model, mode, turns, tokens, approval channel."""
        session = self.get_session()
        usage = session.accounts.usage
        channel = _channel(self.ip, self.request())
        notebook = session.tool_context.open_notebook or "unknown (set ELELEM_NOTEBOOK)"
        rows = [
            ("provider", session.provider_name),
            ("model", session.model or "default"),
            ("mode", session.mode),
            ("turns", len(session.conversation.turns)),
            ("tokens", f"in {usage.get('input', 0):,} · out {usage.get('output', 0):,}"),
            ("budget", session.accounts.ledger.summary()),
            ("approvals", channel),
            ("notebook", notebook),
        ]
        return "| | |\n|:---|:---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)

    def say(self, markdown: str, request: ExecuteRequest | None = None) -> None:
        """Show a Markdown message (safely rendered) in the cell's output; a text client
        (console) gets its text/plain as terminal text. `request`: the one being handled,
        when the caller has it."""
        from IPython.display import display

        text = self.watcher(request or self.request()) == "text"
        display(say_bundle(markdown, as_text=text), raw=True)

    def _approver(self, view: Any, request: ExecuteRequest, page: Any = None) -> Any:
        kernel = getattr(self.ip, "kernel", None)
        return approver_for(
            _channel(self.ip, request),
            page=page,
            view=view,
            kernel=kernel,
            call_in_main=self.runner.call_in_main,
            allow_stdin=request.allow_stdin,
            memo=self.approvals,
        )

    def _link_notebook(self, request: ExecuteRequest, cell: str | None) -> Any:
        """This turn's link to the open notebook, opened where the frontend can take it;
        else None."""
        from elelem_kernel.jupyter import notebook_comm  # lazy: small, but only for turns

        restore = _restore_module()
        frontend = self.ip.user_ns.get(restore.FRONTEND_KEY) if restore else None
        if not cell or not notebook_comm.reachable(frontend, _channel(self.ip, request)):
            return None
        link = notebook_comm.NotebookLink(cell)
        try:
            link.open()
        except Exception as error:
            self.say(f"warning: the open notebook is not reachable: {error}", request)
            return None
        return link

    def undo(self, turn: str | None = None, cell: str | None = None, redo: bool = False) -> str:
        """`/undo`: revert the last turn's changes (jupyter/undo.py), reaching the open
        notebook's cells through the frontend where it can be reached. The Undo button
        names its `turn` (refused unless it is the last undoable one) and `cell`. With
        `redo`, `/redo`: apply again the turn undone last."""
        from elelem_kernel.jupyter import notebook_comm, undo  # lazy: only for /undo

        session = self.get_session()
        request = self.request()
        if turn is not None:  # from the button's comm, not a cell: restore first, as a
            self._restore(session, request, None)  # first prompt would
        if cell is not None:  # and reach the open notebook through the turn's own cell
            request = request.for_cell(cell)
        cell = request.cell_id
        restore = _restore_module()
        frontend = self.ip.user_ns.get(restore.FRONTEND_KEY) if restore else None
        link = None
        if cell and notebook_comm.reachable(frontend, _channel(self.ip, request)):
            link = notebook_comm.NotebookLink(cell)
            link.open()
        try:
            step = undo.redo(session, link) if redo else undo.undo(session, link, turn)
            text, _ = self.runner.run(step)
        finally:
            if link is not None:
                link.close()
        return str(text)

    def _restore(self, session: Session, request: ExecuteRequest, cell: str | None) -> None:
        """Restore the notebook's turns up to the cell being run (`cell`, with `request`'s
        source), saying how it went where the watcher will see it."""
        restore = _restore_module()
        if restore is None:
            return
        message = restore.restore_into(
            session, self.ip.user_ns, dict(os.environ), cell=cell, source=request.code
        )
        if not message:
            return
        watcher = self.watcher(request)
        if watcher == "widgets" and RESTORED.fullmatch(message):
            self.restored = message  # the next turn's live view shows it: it is not saved
        elif watcher == "text" and self.notebook_path() is None:
            return  # a console has no notebook: that there is none to restore is no news
        else:
            self.say(message, request)  # warnings stay with the cell; headless runs keep their log

    def _place(self, session: Session, request: ExecuteRequest) -> None:
        """Say once where the workspace is when it is not around the notebook's folder.

        Through a gateway, or a kernel started elsewhere, the tools would otherwise work
        on a folder the person did not expect.
        """
        if self.placed:
            return
        self.placed = True
        workspace = Path(session.workspace)
        notebook = self.notebook_path()
        if notebook is None:
            self.say(f"workspace: `{workspace}` (the notebook's folder is not known here)", request)
        elif not notebook.parent.is_dir():
            self.say(
                f"workspace: `{workspace}`: this kernel cannot see the notebook's folder "
                f"`{notebook.parent}` (it runs elsewhere), so the tools read and write there",
                request,
            )
        elif not notebook.parent.resolve().is_relative_to(workspace.resolve()):
            self.say(
                f"workspace: `{workspace}`, not the notebook's folder `{notebook.parent}`: "
                "the tools read and write there",
                request,
            )

    def _announce(self, session: Session, request: ExecuteRequest) -> None:
        if not self.announced:
            self.announced = True
            if self.pending_notice:
                self.say(f"provider **{session.provider_name}**: {self.pending_notice}", request)


def _allowed(session: Session, allow: list[str] | None) -> list[str] | None:
    """`--allow`'s tools as the session names them; `ConfigError` for one it has not."""
    if not allow:
        return allow
    try:
        return check_tools(session, allow)
    except BadInput as error:
        raise ConfigError(f"--allow: {error}") from None


def _for_this_turn(
    session: Session, scope: ExitStack, allow: list[str], overrides: dict[str, Any]
) -> None:
    """Apply the turn's overrides (provider, model, mode, system prompt, options) and its
    allowed tools to `session`; closing `scope` puts them back."""
    scope.enter_context(session.overridden(**overrides))
    granted = session.grants.allow
    added = set(allow) - granted
    granted |= added
    scope.callback(granted.difference_update, added)


class _SubshellTeardown(logging.Filter):
    """Drops asyncio's "Task was destroyed but it is pending!" for ipykernel's own message
    handlers (`run_in_context` and what it awaits): JupyterLab >= 4.4 deletes a comm's
    subshell when the comm closes (a turn's live view, frozen), and ipykernel then ends that
    subshell's loop with the handler of its last message pending. The log line would land
    in the running cell as a red stderr line about no code of the person's."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        ours = text.startswith("Task was destroyed but it is pending!")
        return not (ours and f"{os.sep}ipykernel{os.sep}" in text)


def quiet_subshell_teardown() -> None:
    """Install `_SubshellTeardown` on the `asyncio` logger, once per process."""
    log = logging.getLogger("asyncio")
    if not any(isinstance(f, _SubshellTeardown) for f in log.filters):
        log.addFilter(_SubshellTeardown())


#: A restore that went without a warning: news for the moment, not for the saved cell.
RESTORED = re.compile(r"restored \d+ turns? from [^\n]*")

#: The environment fact saying how the person types here, so the model suggests the words
#: that work in this front (a slash command is a cell of its own in the Elelem kernel).
WHERE = {
    "kernel": (
        "The person types in the Elelem kernel: every cell is a prompt, a cell starting "
        "with `/` is a slash command (`/provider anthropic`, `/mode verify`), `%%py` runs "
        "Python."
    ),
    "magic": (
        "The person types in a Python notebook: a `%%elelem` cell is a prompt (`%%elelem "
        "--mode verify`, `%%elelem -p anthropic`), `%elelem /command` a slash command."
    ),
}


#: How a budget is raised, in the words of each Jupyter front.
BUDGET_HINT = {
    "kernel": "/budget {amount}",
    "magic": "%%elelem --budget {quoted} (this cell) or %elelem /budget {amount}",
}


def _notebook_fact(reachable: bool) -> str:
    """The environment fact about the open notebook, for the system prompt."""
    if reachable:
        return (
            "The notebook open in Jupyter is reachable: notebook_read, notebook_edit and "
            "notebook_run without path act on it as the person sees it (unsaved edits "
            "included); your edits show as diffs the person accepts or rejects. When you "
            "write to the person about a cell, name it as its shown_as says (cell [5], the "
            "6th cell): they see neither cell ids nor 0-based indexes."
        )
    return (
        "The notebook open in Jupyter is not reachable from here (no frontend extension "
        "took this turn): the notebook tools need a path to a file, and propose_cell "
        "offers the person a new cell."
    )


def _channel(ip: Any, request: ExecuteRequest) -> str:
    return choose_channel(getattr(ip, "kernel", None), request)


def _record_of(
    result: TurnResult | None, session: Session, prompt: str, cell: str | None, interrupted: bool
) -> TurnRecord:
    """The turn's record, or a minimal one when the turn never produced it."""
    if result is not None:
        return result.record
    return unfinished(
        conversation=session.conversation.id,
        prompt=prompt,
        provider=session.provider_name,
        model=session.model,
        cell=cell,
        interrupted=interrupted,
    )


def _drop_deleted(session: Session, deleted: tuple[str, ...]) -> None:
    """Forget the turns of cells deleted from the notebook (JupyterLab's `deletedCells`)."""
    if not deleted:
        return
    gone = {str(cell) for cell in deleted}
    for conversation in session.conversations.by_id.values():
        conversation.turns[:] = [t for t in conversation.turns if t.get("cell") not in gone]


def _restore_module() -> Any:
    try:
        from elelem_kernel.jupyter import (
            restore,  # lazy: nbformat and the agent, only once a session exists
        )
    except ModuleNotFoundError as error:
        if error.name and error.name.endswith("jupyter.restore"):
            return None
        raise
    return restore


def say_bundle(markdown: str, as_text: bool = False) -> dict[str, str]:
    """The `data` of a message shown by `say`: safe HTML, the Markdown made inert (what
    `nbconvert --to elelem-markdown` writes) and the text as typed, or rendered as terminal
    text `as_text` (for a console, which prints the text/plain)."""
    return {
        "text/html": no_blank_lines(to_html(markdown)),
        "text/markdown": neutralise(markdown),
        "text/plain": visible(to_text(markdown) if as_text else markdown),
    }


async def _ask_window_ahead(session: Session) -> None:
    """Start the session's question for its provider's window on the turns' loop as a
    turn begins: a local server's answer then comes while the link and the view are made,
    not after them (`ModelFacts.probe_window` awaits it). A setting that cannot be read is
    the turn's to report, not this."""
    with suppress(Exception):
        session.facts.ask_window_ahead()
