"""The exceptions elelem-kernel raises on purpose.

ElelemError            root: every message says what to do about it
├── ConfigError        unknown provider, missing key, bad option
├── BadInput           the person typed something unusable: a command's argument, an option,
│                      a severity (also a ValueError, for callers that catch that)
├── OverBudget         the next request could pass a budget: the turn ends before sending it
├── ProviderError      the model's API failed (HTTP status, stream cut, bad JSON)
│   ├── StatusError       an HTTP status or an error event, maybe with retry_after
│   └── ContextOverflow   the request did not fit the model's context window
├── ToolError          a tool refused its input (bad path, missing file)
└── ReviewError        a review cannot run: not a git repository, unknown revision, git failed

TooLarge, Undecodable  a provider's stream passed its bound or cannot be read; the
                       provider turns them into a ProviderError (`providers.stream.problem`)
GroupStopped           a tool call's process group was stopped: nothing new is started
FrontendGone           the open notebook did not answer a request over its comm
RpcError               a JSON-RPC error of the ACP agent: its answer to a request, or the
                       client's answer to one of the agent's
BudgetStopped          a notebook cell's turn stopped by a budget: the cell fails
TurnInterrupted        (a KeyboardInterrupt) the stop button ended a notebook cell's turn
Stopped                (a BaseException) SIGTERM or SIGHUP came while no CLI turn ran
UntrustedPluginsWarning  (a UserWarning) project plugins skipped: their folder is not trusted

Signals rather than faults live here too, so every class the package raises has one home.
"""

from __future__ import annotations


class ElelemError(Exception):
    """Root of elelem-kernel's own errors; the message is meant for the person."""


class ConfigError(ElelemError):
    """Something is configured wrong: an unknown provider, a missing key, a bad option."""


class BadInput(ElelemError, ValueError):
    """What the person typed cannot be used: an unknown tool or server in a command, a bad
    `--severity`, an unexpected argument. The message says what would work. Raised where the
    input is checked and caught, as this one type, where a front shows it."""


class PromptError(BadInput):
    """An ACP client's prompt cannot be taken as it is (an image of a type, size or number
    the model cannot be sent); the message says what to change."""


class OverBudget(ElelemError):
    """The next request could pass a budget: the turn ends before sending it."""


class ProviderError(ElelemError):
    """A model call failed; `retryable` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class StatusError(ProviderError):
    """A `ProviderError` from an HTTP status or error event; may carry `retry_after` seconds."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(message, retryable=retryable, status=status)
        self.retry_after = retry_after


class ContextOverflow(ProviderError):
    """The server refused a request too big for its context window.

    `limit`: the window the server stated (tokens), None when it did not say;
    `requested`: the request's size it counted, when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        limit: int | None = None,
        requested: int | None = None,
        status: int | None = None,
    ):
        super().__init__(message, status=status)
        self.limit = limit
        self.requested = requested


class ToolError(ElelemError):
    """A tool cannot do what it was asked; the message goes back to the model."""


class TooLarge(Exception):
    """A line, event or body passed the limit; `what` names which ("line", "event")."""

    def __init__(self, what: str, limit: int):
        super().__init__(f"{what} over {limit} bytes")
        self.what = what
        self.limit = limit


class Undecodable(Exception):
    """The body came in a content encoding that is not read, or does not decompress."""

    def __init__(self, encoding: str, reason: str = ""):
        super().__init__(encoding)
        self.encoding = encoding
        self.reason = reason


class ReviewError(ElelemError):
    """A review cannot run: not a git repository, an unknown revision, git itself failed."""


class GroupStopped(Exception):
    """Raised by `Children.popen` once the group was stopped: nothing new is started."""


class RpcError(Exception):
    """A JSON-RPC error (the ACP agent): the answer to a request, or the client's to ours."""

    def __init__(self, code: int, message: str, data: object = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def as_json(self) -> dict[str, object]:
        """The error object of a JSON-RPC response."""
        error: dict[str, object] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class FrontendGone(Exception):
    """The frontend did not answer (closed tab, no extension, another client)."""


class TurnInterrupted(KeyboardInterrupt):
    """The stop button ended a turn; its partial reply is kept in the output above."""

    def __init__(self, message: str = "turn interrupted; the partial reply is kept above"):
        super().__init__(message)

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"KeyboardInterrupt: {self}"]


class BudgetStopped(Exception):
    """A turn stopped before a request that could pass a budget: the cell fails, so what
    runs the notebook stops there; the output above says what was spent and how to go on."""

    def __init__(self, message: str = "stopped by the budget: the output above says how to go on"):
        super().__init__(message)

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"BudgetStopped: {self}"]


class Stopped(BaseException):
    """A SIGTERM or SIGHUP that arrived while no turn was running."""


class UntrustedPluginsWarning(UserWarning):
    """Project plugins were skipped because their folder is not trusted."""
