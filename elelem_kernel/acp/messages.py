"""ACP's messages as plain JSON: the shapes the agent sends, typed, and their builders.

The agent speaks ACP without the protocol SDK (its pydantic schema takes a second to
import, more than a reply's first token): each message is a dict whose keys are the
schema's own (camelCase), built here and written as JSON by `jsonrpc.py`. As the SDK
serializes, a field with no value is left out rather than sent as null. The tests check
every kind of message built here against the SDK's schema models (tests/acp/test_messages.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict, Union

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolStatus = Literal["pending", "in_progress", "completed", "failed"]
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
PlanStatus = Literal["pending", "in_progress", "completed"]
PermissionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
#: A tool's input and output as the client is shown them: any JSON value. (Union: it
#: names itself, and `|` cannot join a name in quotes at run time.)
Json = Union[None, bool, int, float, str, list["Json"], dict[str, "Json"]]  # noqa: UP007


class TextBlock(TypedDict):
    """A text content block."""

    type: Literal["text"]
    text: str


class ContentItem(TypedDict):
    """A tool call's content: a block of text."""

    type: Literal["content"]
    content: TextBlock


class DiffItem(TypedDict):
    """A tool call's content: a file before (`oldText`, absent when new) and after."""

    type: Literal["diff"]
    path: str
    newText: str
    oldText: NotRequired[str]


class TerminalItem(TypedDict):
    """A tool call's content: the client's terminal it runs in, shown live."""

    type: Literal["terminal"]
    terminalId: str


ToolContent = ContentItem | DiffItem | TerminalItem


class Location(TypedDict):
    """A file a tool call reads or changes, and the line when known."""

    path: str
    line: NotRequired[int]


class MessageChunk(TypedDict):
    """`user_message_chunk`, `agent_message_chunk` or `agent_thought_chunk`."""

    sessionUpdate: Literal["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"]
    content: TextBlock


class ToolCallFields(TypedDict, total=False):
    """What a `tool_call` or `tool_call_update` may say about a call besides its id."""

    title: str
    kind: ToolKind
    status: ToolStatus
    content: list[ToolContent]
    locations: list[Location]
    rawInput: Json
    rawOutput: Json


class ToolCall(ToolCallFields):
    """The permission request's view of a call: its id and what is known of it."""

    toolCallId: str


class ToolCallUpdate(ToolCall):
    """`tool_call` (a call starts: it has a title) or `tool_call_update` (it moves on)."""

    sessionUpdate: Literal["tool_call", "tool_call_update"]


class PlanEntry(TypedDict):
    """One step of a plan."""

    content: str
    priority: Literal["high", "medium", "low"]
    status: PlanStatus


class PlanUpdate(TypedDict):
    """`plan`: the whole plan, each time."""

    sessionUpdate: Literal["plan"]
    entries: list[PlanEntry]


class CommandInput(TypedDict):
    """What to type after a slash command."""

    hint: str


class Command(TypedDict):
    """A slash command the client may offer."""

    name: str
    description: str
    input: NotRequired[CommandInput]


class CommandsUpdate(TypedDict):
    """`available_commands_update`."""

    sessionUpdate: Literal["available_commands_update"]
    availableCommands: list[Command]


class ModeUpdate(TypedDict):
    """`current_mode_update`."""

    sessionUpdate: Literal["current_mode_update"]
    currentModeId: str


class SelectOption(TypedDict):
    """One value of a select config option."""

    value: str
    name: str


class ConfigOption(TypedDict):
    """A session config option: a select (the mode, the provider)."""

    type: Literal["select"]
    id: str
    name: str
    category: str
    currentValue: str
    options: list[SelectOption]
    description: NotRequired[str]


class ConfigUpdate(TypedDict):
    """`config_option_update`."""

    sessionUpdate: Literal["config_option_update"]
    configOptions: list[ConfigOption]


class Cost(TypedDict):
    """What the session has cost."""

    amount: float
    currency: str


class UsageUpdate(TypedDict):
    """`usage_update`: the context window's use."""

    sessionUpdate: Literal["usage_update"]
    used: int
    size: int
    cost: NotRequired[Cost]


SessionUpdate = (
    MessageChunk
    | ToolCallUpdate
    | PlanUpdate
    | CommandsUpdate
    | ModeUpdate
    | ConfigUpdate
    | UsageUpdate
)


class Mode(TypedDict):
    """A session mode."""

    id: str
    name: str
    description: str


class Modes(TypedDict):
    """The session's mode and those it may switch to."""

    currentModeId: str
    availableModes: list[Mode]


class Usage(TypedDict):
    """A turn's tokens, in a `session/prompt` answer."""

    inputTokens: int
    outputTokens: int
    totalTokens: int
    cachedReadTokens: NotRequired[int]
    cachedWriteTokens: NotRequired[int]


class PromptResult(TypedDict):
    """The answer to `session/prompt`."""

    stopReason: StopReason
    usage: NotRequired[Usage]


class SessionResult(TypedDict):
    """The answer to `session/new` (with its id) and `session/load` (without)."""

    sessionId: NotRequired[str]
    modes: Modes
    configOptions: list[ConfigOption]


class SessionInfo(TypedDict):
    """A saved session, in the answer to `session/list`."""

    sessionId: str
    cwd: str
    title: NotRequired[str]
    updatedAt: NotRequired[str]


class PermissionOption(TypedDict):
    """One answer the client may give to a permission request."""

    optionId: str
    name: str
    kind: PermissionKind


def text_block(text: str) -> TextBlock:
    return {"type": "text", "text": text}


def agent_text(text: str) -> MessageChunk:
    """An `agent_message_chunk` of text."""
    return {"sessionUpdate": "agent_message_chunk", "content": text_block(text)}


def thought_text(text: str) -> MessageChunk:
    """An `agent_thought_chunk` of text."""
    return {"sessionUpdate": "agent_thought_chunk", "content": text_block(text)}


def user_text(text: str) -> MessageChunk:
    """A `user_message_chunk` of text (a saved prompt, replayed)."""
    return {"sessionUpdate": "user_message_chunk", "content": text_block(text)}


def text_content(text: str) -> ContentItem:
    """A tool call's content: `text`."""
    return {"type": "content", "content": text_block(text)}


def diff_content(path: str, new_text: str, old_text: str | None = None) -> DiffItem:
    """A tool call's content: the diff of the file at `path` (`old_text` None: a new file)."""
    diff: DiffItem = {"type": "diff", "path": path, "newText": new_text}
    if old_text is not None:
        diff["oldText"] = old_text
    return diff


def terminal_content(terminal_id: str) -> TerminalItem:
    """A tool call's content: the client's terminal `terminal_id`."""
    return {"type": "terminal", "terminalId": terminal_id}


def location(path: str, line: int | None = None) -> Location:
    where: Location = {"path": path}
    if line is not None:
        where["line"] = line
    return where


def tool_call(
    tool_call_id: str,
    *,
    start: bool = False,
    title: str | None = None,
    kind: ToolKind | None = None,
    status: ToolStatus | None = None,
    content: list[ToolContent] | None = None,
    locations: list[Location] | None = None,
    raw_input: Json = None,
    raw_output: Json = None,
) -> ToolCallUpdate:
    """A `tool_call` (`start`, which needs a title) or a `tool_call_update`; what is None
    is left out (unchanged, for an update)."""
    update: ToolCallUpdate = {
        "sessionUpdate": "tool_call" if start else "tool_call_update",
        "toolCallId": tool_call_id,
    }
    if title is not None:
        update["title"] = title
    if kind is not None:
        update["kind"] = kind
    if status is not None:
        update["status"] = status
    if content is not None:
        update["content"] = content
    if locations is not None:
        update["locations"] = locations
    if raw_input is not None:
        update["rawInput"] = raw_input
    if raw_output is not None:
        update["rawOutput"] = raw_output
    return update


def plan_entry(content: str, status: PlanStatus = "pending") -> PlanEntry:
    return {"content": content, "priority": "medium", "status": status}


def plan(entries: list[PlanEntry]) -> PlanUpdate:
    return {"sessionUpdate": "plan", "entries": entries}


def commands_update(commands: list[Command]) -> CommandsUpdate:
    return {"sessionUpdate": "available_commands_update", "availableCommands": commands}


def mode_update(mode: str) -> ModeUpdate:
    return {"sessionUpdate": "current_mode_update", "currentModeId": mode}


def config_update(options: list[ConfigOption]) -> ConfigUpdate:
    return {"sessionUpdate": "config_option_update", "configOptions": options}


def usage_update(used: int, size: int, cost: float | None = None) -> UsageUpdate:
    update: UsageUpdate = {"sessionUpdate": "usage_update", "used": used, "size": size}
    if cost is not None:
        update["cost"] = {"amount": cost, "currency": "USD"}
    return update
