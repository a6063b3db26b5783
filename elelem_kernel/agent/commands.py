"""The built-in slash commands: `/help`, `/provider`, `/mode` and the others.

A command is `fn(session, args: str) -> str` returning Markdown for the person, kept in a
`Commands` table (`agent/command_table.py`). Setups and fronts add their own with
`session.commands.add(...)`. Arguments it cannot use raise `BadInput` (another
`ElelemError` too is shown to the person, with the usage line).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from elelem_kernel.agent import budget, trust
from elelem_kernel.agent.pricing import dollars
from elelem_kernel.agent.registry import load_trusted_plugins
from elelem_kernel.agent.toolbox import MODES
from elelem_kernel.agent.window_commands import add_window_commands, ask_window, window_line
from elelem_kernel.errors import BadInput
from elelem_kernel.options import ENV, check_name, describe, from_env, parse_value

if TYPE_CHECKING:
    from elelem_kernel.agent.command_table import Commands, CommandSession, S

#: What runs a turn rather than answering at once: `elelem-kernel NAME`, `%%elelem NAME` and,
#: but for `ask` (a cell is a prompt), `/NAME` in the Elelem kernel, `%elelem /NAME` and
#: `elelem-kernel chat`. The CLI's and the magic's help and the `/help` table read it.
TURN_COMMANDS: dict[str, tuple[str, str]] = {
    "ask": ("", "one turn of the conversation: the prompt in, the reply out"),
    "review": (
        "[TARGET] [--focus TEXT] [--severity LEVEL]",
        "review a git change (the uncommitted changes, else the last commit; or a revision, "
        "range or paths)",
    ),
}


def add_builtin_commands(commands: Commands[S]) -> None:
    """The commands every session has."""
    commands.add("help", "list the commands", _help)
    usage, about = TURN_COMMANDS["review"]
    commands.add(
        "review",
        about,
        _review_elsewhere,
        lambda s, a: ["--focus", "--severity"],
        f"/review {usage}",
    )
    _add_model_commands(commands)
    _add_session_commands(commands)


def _add_model_commands(commands: Commands[S]) -> None:
    """/provider, /model, /option, /mode and /tools: what the turns are sent to, with what."""
    commands.add(
        "provider",
        "show or switch the provider (the conversation is kept)",
        _provider,
        lambda s, a: s.facts.provider_names(),
        "/provider [name]",
    )
    commands.add("model", "show or switch the model", _model, usage="/model [name]")
    commands.add(
        "option",
        "show the provider's options, set one (JSON or text), or unset one",
        _option,
        lambda s, a: list(s.provider.known_options or ()),
        "/option [NAME [VALUE]]",
    )
    commands.add(
        "mode",
        "show or switch the mode: plan, build, verify or auto",
        _mode,
        lambda s, a: list(MODES),
        "/mode [MODE]",
    )
    commands.add("tools", "list the tools the current mode offers", _tools)


def _add_session_commands(commands: Commands[S]) -> None:
    """/allow, the conversation's commands, the context's, spending and /trust."""
    commands.add(
        "allow",
        "run these tools without asking for the rest of the session (--clear: ask again)",
        _allow,
        lambda s, a: ["--clear", *sorted(s.toolbox.tools)],
        "/allow [TOOL ...] | /allow --clear",
    )
    commands.add("clear", "start a new conversation", _clear)
    commands.add("context", "show what the next request would send", _context)
    add_window_commands(commands)
    commands.add("usage", "tokens and cost so far in this session", _usage)
    commands.add(
        "budget",
        "show the budget, spent and left; set one (dollars or tokens, /turn) or turn it off",
        _budget,
        lambda s, a: ["off", "2", "0.50/turn", "200k tokens"],
        "/budget [AMOUNT[/turn] | off]",
    )
    commands.add("history", "list the turns of this conversation", _history)
    commands.add("forget", "leave turn N out of the model's context", _forget, usage="/forget N")
    commands.add(
        "use",
        "switch to another conversation of this notebook",
        _use,
        lambda s, a: list(s.conversations),
        "/use ID",
    )
    commands.add("save", "write this conversation to a Markdown file", _save, usage="/save [PATH]")
    commands.add("policy", "the site policy in force, and the file it comes from", _policy)
    commands.add(
        "trust",
        "trust this folder's plugins and MCP configs so they load (--list, --revoke)",
        _trust,
        lambda s, a: ["--list", "--revoke"],
        "/trust [DIR] | /trust --list | /trust --revoke [DIR]",
    )


def _policy(session: CommandSession, args: str) -> str:
    return session.policy.describe()


def _help(session: CommandSession, args: str) -> str:
    # A "|" inside a table cell, even in a code span, splits the row: Markdown tables break.
    rows = [
        f"| `{c.usage.replace('|', ' / ')}` | {c.description.replace('|', '/')} |"
        for c in session.commands.commands.values()
    ]
    table = "| command | what it does |\n|:---|:---|\n" + "\n".join(sorted(rows))
    return "\n\n".join([table, *session.commands.notes])


def _review_elsewhere(session: CommandSession, args: str) -> str:
    # the fronts run `/review` as a turn before it gets here; this is `session.command`
    return (
        "`/review` runs a review turn: `/review` in the Elelem kernel and `elelem-kernel "
        "chat`, `%%elelem review` or `%elelem /review` with the magic, `elelem-kernel "
        "review`, or `elelem_kernel.review()` from Python."
    )


def _provider(session: CommandSession, args: str) -> str:
    if args:
        name, _, model = args.partition(" ")
        session.set_provider(name, model.strip() or None)
    return f"provider: **{session.provider_name}**, model: **{session.model or 'default'}**"


def _model(session: CommandSession, args: str) -> str:
    if args:
        session.set_provider(session.provider_name, args)
    return f"model: **{session.model or 'default'}** (provider {session.provider_name})"


def _option(session: CommandSession, args: str) -> str:

    name, _, value = args.partition(" ")
    if name:
        name = check_name(name)
        if value.strip():
            session.facts.set_option(name, parse_value(value))
        else:
            session.facts.set_option(name, None)
    lines = [
        f"options of **{session.provider_name}**: {describe(session.facts.options) or 'none set'}"
    ]
    env = from_env()
    if env:
        lines.append(f"from {ENV}: {describe(env)}")
    known = session.provider.known_options
    if known is not None:
        lines.append(f"known: {', '.join(known) or 'none'}")
    return "\n\n".join(lines)


def _mode(session: CommandSession, args: str) -> str:
    if args:
        session.set_mode(args)
    kinds = ", ".join(MODES[session.mode])
    return f"mode: **{session.mode}** (offers {kinds} tools)"


def _tools(session: CommandSession, args: str) -> str:
    tools = session.toolbox.offered(session.mode)
    note = session.mcp.tools_note() if session.mcp is not None else None
    after = f"\n\n{note}" if note else ""
    if not tools:
        return f"No tools in {session.mode} mode.{after}"
    rows = [f"| `{t.name}` | {t.kind} | {_cell(t.description.splitlines()[0])} |" for t in tools]
    return (
        f"Tools in {session.mode} mode:\n\n| tool | kind | what it does |\n|:---|:---|:---|\n"
        + "\n".join(rows)
        + after
    )


def _cell(text: str) -> str:
    """Plain `text` as a Markdown table cell: its `*` (a glob's) and `|` shown as typed."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("|", "\\|")


def _allow(session: CommandSession, args: str) -> str:
    words = args.split()
    if words == ["--clear"]:
        session.grants.allow.clear()
        session.grants.always.clear()
    elif words:
        session.grants.allow |= set(check_tools(session, words))
    allowed = ", ".join(f"`{n}`" for n in sorted(session.grants.names())) or "none"
    return f"run without asking: {allowed} (mode **{session.mode}**)"


def check_tools(session: CommandSession, names: list[str]) -> list[str]:
    """`names` as tools to allow; BadInput naming the real tools when one is unknown.

    MCP tools (`mcp__SERVER__TOOL`) are taken as given: their servers start with a turn.
    """
    unknown = [n for n in names if session.toolbox.get(n) is None and not n.startswith("mcp__")]
    if unknown:
        known = ", ".join(sorted(session.toolbox.tools))
        raise BadInput(f"no tool {', '.join(map(repr, unknown))}; tools: {known}")
    return [getattr(session.toolbox.get(n), "name", n) for n in names]


def _clear(session: CommandSession, args: str) -> str:
    session.conversations.new()
    return f"Started a new conversation ({session.conversation.id})."


def _context(session: CommandSession, args: str) -> str:
    ask_window(session)  # a small window's brief prompts are what the table must show
    messages = session.messages("")[:-1]
    tools = session.toolbox.specs(session.mode)
    lines = ["| part | characters | ~tokens |", "|:---|---:|---:|"]
    total = 0
    for m in messages:
        size = len(json.dumps(m, ensure_ascii=False))
        total += size
        head = str(m.get("content", ""))[:60].replace("\n", " ").replace("|", "\\|")
        lines.append(f"| {m['role']}: {head} | {size} | {session.facts.estimate([m])} |")
    size = len(json.dumps(tools))
    total += size
    lines.append(f"| {len(tools)} tool schemas | {size} | {session.facts.estimate([], tools)} |")
    lines.append(f"| **total** | {total} | **~{session.facts.estimate(messages, tools)}** |")
    left = session.conversation.left_out(
        session.conversations.history, session.facts.window()[0] * 4
    )
    note = f"\n\n{left} older turns are left out to fit the context budget." if left else ""
    return "\n".join(lines) + note + "\n\n" + window_line(session)


def _usage(session: CommandSession, args: str) -> str:
    accounts = session.accounts
    u, turns = accounts.usage, accounts.turns
    return (
        f"{turns} turn{'' if turns == 1 else 's'}, {u.get('input', 0)} tokens in "
        f"({u.get('cache_read', 0)} cached), {u.get('output', 0)} out, "
        f"cost {'unknown' if accounts.cost is None else dollars(accounts.cost)}"
    )


def _budget(session: CommandSession, args: str) -> str:
    if args:
        session.accounts.ledger.set(budget.parse(args), session.facts)
    return session.accounts.ledger.describe()


def _history(session: CommandSession, args: str) -> str:
    turns = session.conversation.turns
    if not turns:
        return f"Conversation {session.conversation.id} has no turns yet."
    rows = []
    for i, t in enumerate(turns, 1):
        head = " ".join(str(t.get("prompt", "")).split())[:60].replace("|", "\\|")
        usage = t.get("usage") or {}
        forgotten = " (forgotten)" if t.get("turn") in session.conversation.forgotten else ""
        rows.append(
            f"| {i} | {t.get('cell') or ''} | {head}{forgotten} | "
            f"{usage.get('input', 0)}/{usage.get('output', 0)} |"
        )
    return (
        f"Conversation {session.conversation.id}:\n\n| # | cell | prompt | tokens in/out |\n"
        "|---:|:---|:---|---:|\n" + "\n".join(rows)
    )


def _forget(session: CommandSession, args: str) -> str:
    if not args.strip().isdigit():
        raise BadInput("give the turn number from /history")
    try:
        record = session.conversation.forget(int(args))
    except IndexError as error:  # no such turn
        raise BadInput(str(error)) from None
    return f"Turn {args} ({str(record.get('prompt', ''))[:40]!r}) is left out from now on."


def _use(session: CommandSession, args: str) -> str:
    n = len(session.conversations.use(args))
    return f"Using conversation {args} ({n} turn{'' if n == 1 else 's'})."


def _save(session: CommandSession, args: str) -> str:
    path = Path(args or f"conversation-{session.conversation.id}.md")
    if not path.is_absolute():
        path = session.workspace / path
    parts = [f"# Conversation {session.conversation.id}\n"]
    for t in session.conversation.turns:
        parts.append(f"## Prompt\n\n{t.get('prompt', '')}\n\n## Reply\n\n{t.get('reply', '')}\n")
    path.write_text("\n".join(parts), encoding="utf-8")
    n = len(session.conversation)
    return f"Saved {n} turn{'' if n == 1 else 's'} to `{path}`."


def _trust(session: CommandSession, args: str) -> str:
    return trust_command(args, session.workspace, session)


def trust_command(args: str, workspace: Path, session: CommandSession | None = None) -> str:
    """`/trust [DIR]`, `/trust --list`, `/trust --revoke [DIR]`; Markdown saying what it did.

    No DIR means the workspace root (and the current folder when it holds project files).
    Trusting loads the folder's plugins at once and runs the setups they add on `session`.
    Works without a session too: a front whose default provider comes from a plugin that
    is not trusted yet cannot make one.
    """
    words = split_words(args)
    if words[:1] == ["--list"]:
        if len(words) > 1:
            raise BadInput("--list takes no folder")
        return trust.list_text()
    revoking = words[:1] == ["--revoke"]
    words = words[1:] if revoking else words
    if len(words) > 1 or any(w.startswith("-") for w in words):
        raise BadInput(f"unexpected {' '.join(words)!r}: give at most one folder")
    folders = [Path(words[0]).expanduser()] if words else trust.default_folders(workspace)
    if revoking:
        return (
            trust.revoke_text(folders) + "\n\nPlugins already loaded stay loaded until the "
            "kernel or program restarts."
        )
    try:
        text = trust.trust_text(folders)
    except NotADirectoryError as error:
        raise BadInput(str(error)) from None
    return "\n\n".join([text, *load_trusted_plugins(session)])


def split_words(line: str) -> list[str]:
    """`line` split as a shell would (`--focus "a b"` gives `a b`); BadInput for an
    unbalanced quote."""
    import shlex  # lazy: only commands with quoted arguments split

    try:
        return shlex.split(line)
    except ValueError as error:  # "No closing quotation"
        raise BadInput(f"{error} in: {line}") from None
