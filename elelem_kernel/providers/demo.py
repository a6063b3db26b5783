"""The demo provider: a scripted, offline "model" that uses the real tools.

It lets a person try everything with no key and no network, and it says so. What it does
depends on the prompt:
- by default it lists the workspace and reads the README (two parallel calls), then
  answers with facts taken from those results;
- "write ... file" writes a small file (a write call, so approval applies);
- "python", "compute", "variables" (or a ```python block) runs code in the namespace;
- "slowly" streams a long answer slowly, to try the stop button;
- "mcp" calls a read-only MCP tool on offer (`mcp__SERVER__TOOL`), preferring one whose
  name shares a word with the prompt, with its required arguments filled in;
- with a `report_finding` tool on offer it runs the scripted code review;
- "fix it" (any prompt asking for a fix, or to run the cell that failed) reads the open
  notebook and proposes a fix for the failing cell (`demo_fix`);
- a prompt with images (an ACP client's pasted screenshot) is answered with what it
  received, each image's size, and that a real model would look at them.
Later turns mention the first prompt of the conversation, which shows memory at work.

It reports usage as a real model does, so budgets, the context meter and compaction
behave offline as they will online: its own counts, the same estimate the session's
meter makes (`tokens.estimate` of the request, and of what it streamed). It takes the
usual options: `max_tokens` cuts a reply there (stop `max_tokens`), as a model's limit
does, and a budget's output cap the same way (`limited`); the sampling options
(`temperature`, `top_p`, `seed`, `stop`, `thinking`, `extra`) are accepted and change
nothing in a scripted model.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from elelem_kernel.errors import ConfigError
from elelem_kernel.events import Emit, Message, Provider, ProviderEvent, ToolCallEntry
from elelem_kernel.images import label
from elelem_kernel.options import unknown
from elelem_kernel.providers import demo_fix, demo_review
from elelem_kernel.providers.wire_json import Tools, function, items, mapping, text
from elelem_kernel.text import human_size
from elelem_kernel.tokens import estimate

HOW_TO = (
    "I am the **demo model**: offline and scripted, so my answers are canned around what the "
    "tools really returned. For a real model set `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` "
    "(or `OPENAI_BASE_URL` for any OpenAI-compatible server), or run Ollama, {pick}."
)
#: The fronts by the fact the system prompt carries (jupyter/shell_front.py: WHERE).
FRONTS = {"types in the Elelem kernel": "kernel", "types in a Python notebook": "magic"}
#: How to pick a real model, in the words of each front.
PICK = {
    "kernel": "then run `/provider anthropic` (or `openai`) in a cell",
    "magic": "then use `%elelem /provider anthropic` or `%%elelem -p openai`",
    "cli": "then use `-p anthropic` (or `/provider anthropic` in `elelem-kernel chat`)",
}

#: The demo's code assigns no name, so it never replaces a variable of the person's.
DEFAULT_CODE = (
    "import platform\n"
    "print(f'Python {platform.python_version()}: the first ten squares add up to '\n"
    "      f'{sum(n * n for n in range(1, 11))}')\n"
    "[n * n for n in range(1, 11)]"
)

#: What the demo runs for "plot ...": a figure left open, which the python tool captures.
PLOT_CODE = (
    "import matplotlib.pyplot as plt\n"
    "plt.figure(figsize=(4, 3))\n"
    "plt.plot(range(1, 11), [n * n for n in range(1, 11)], marker='o')\n"
    "plt.title('the first ten squares')"
)


def call_id(name: str) -> str:
    """A call id unique to this call, as a real model's are (`demo_write_3f2a9c1b`)."""
    return f"{name}_{uuid.uuid4().hex[:8]}"


class DemoProvider(Provider):
    """Scripted answers that really call `list`, `read`, `write`, `python` and `variables`."""

    name = "demo"
    #: Accepted as a model's are; they change nothing in a scripted reply.
    sampling_options = ("temperature", "top_p", "seed", "stop", "thinking", "extra")
    known_options = ("delay", "max_tokens", *sampling_options)

    def __init__(self, model: str | None = None, delay: float | None = None, **options: Any):
        unknown(self.name, options, self.known_options)
        self.model = model or "demo"
        if delay is None:
            delay = float(os.environ.get("ELELEM_DEMO_DELAY", "0.004"))
        self.delay = delay
        self.options = {"max_tokens": _max_tokens(options.get("max_tokens"))}

    def max_tokens(self) -> int | None:
        """The reply limit: the option `max_tokens`, else none."""
        limit: int | None = self.options["max_tokens"]
        return limit

    def limited(self, max_tokens: int) -> DemoProvider:
        """A copy whose replies stop at `max_tokens` (a budget's cap, a summary's limit)."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.options = {**self.options, "max_tokens": _max_tokens(max_tokens)}
        return copy

    async def fetch(self, messages: list[Message], tools: list[dict[str, Any]], emit: Emit) -> None:
        """One scripted round, counted and cut at `max_tokens` as a model's (`_Counted`).

        `tools` is typed as `tokens.estimate` takes it (JSON it serializes)."""
        counted = _Counted(emit, self.max_tokens())
        await self._script(messages, tools, counted)
        counted.finish(estimate(messages, tools))

    async def _script(self, messages: list[Message], tools: Tools, emit: Emit) -> None:
        """The round the prompt asks for (see the module's list)."""
        offered = {function(t)["name"] for t in tools}
        if "report_finding" in offered:
            await demo_review.fetch(messages, tools, emit)
            return
        turn = _this_turn(messages)
        prompt = str(turn[0].get("content", "")) if turn else ""
        results = {
            m.get("tool_call_id"): _json(m.get("content")) for m in turn if m["role"] == "tool"
        }
        calls: list[ToolCallEntry] = [
            c for m in turn if m["role"] == "assistant" for c in m.get("tool_calls") or []
        ]
        if demo_fix.wanted(prompt, offered):  # "fix the cell that failed" in the open notebook
            demo_fix.fetch(prompt, calls, results, offered, emit, front(messages))
            return
        first = turn[0] if turn else None
        given = first.get("images") if first and first["role"] == "user" else None
        pictures = [i for i in given or [] if isinstance(i, dict)]
        if calls:
            await self._answer(prompt, calls, results, messages, emit)
        elif pictures:
            await self._received(emit, pictures, messages)
        else:
            await self._start(prompt, offered, messages, emit, tools)

    async def _start(
        self,
        prompt: str,
        offered: set[str],
        messages: list[Message],
        emit: Emit,
        tools: Tools | None = None,
    ) -> None:
        """The turn's first round: the scripted case the prompt asks for."""
        low = prompt.lower()
        code = _code_block(prompt)
        if "slowly" in low:
            return await self._slowly(emit)
        chosen = _mcp_tool(low, tools) if re.search(r"\bmcp\b", low) else None
        if chosen is not None:
            return await self._call_mcp(emit, *chosen)
        if re.search(r"\b(write|create|save)\b", low) and "file" in low:
            if "write" in offered:
                return await self._write_file(emit, prompt)
            return await self._unavailable(emit, "write", "build or auto", messages)
        if re.search(r"\b(plot|chart|graph)\b", low) and not code:
            code = PLOT_CODE
        if code or re.search(r"\b(python|compute|calculate|variables?|namespace|dataframe)\b", low):
            if "python" in offered:
                return await self._run_python(emit, code or DEFAULT_CODE, "variables" in offered)
            return await self._unavailable(emit, "python", "verify or auto", messages)
        if "list" in offered and "read" in offered:
            return await self._look_around(emit)
        await self._say(
            emit, f"You said: {prompt.strip()}\n\n{_memory(messages)}{how_to(messages)}"
        )
        return self._stop(emit, "end_turn")

    async def _received(
        self, emit: Emit, pictures: Sequence[Mapping[str, object]], messages: list[Message]
    ) -> None:
        """What the demo "sees" of the prompt's own images: how many, and their sizes."""
        await self._think(emit, "The person sent images with the prompt.")
        count, shown = _sizes(pictures)
        await self._say(
            emit,
            f"I received {count} from you: {shown}. I am scripted, so I cannot tell what "
            f"{'it shows' if len(pictures) == 1 else 'they show'}; a model that takes images "
            "(Claude, GPT-4o, Gemini, a vision model in Ollama) would look and answer about "
            f"{'it' if len(pictures) == 1 else 'them'}.\n\n{_memory(messages)}{how_to(messages)}",
        )
        self._stop(emit, "end_turn")

    async def _slowly(self, emit: Emit) -> None:
        """A long answer, streamed slowly: something to press stop on."""
        await self._think(emit, "The person wants a long answer, streamed slowly.")
        await self._say(emit, " ".join(f"word{i}" for i in range(1, 301)) + ".", delay=0.05)
        self._stop(emit, "end_turn")

    async def _call_mcp(self, emit: Emit, name: str, arguments: dict[str, object]) -> None:
        """Call the MCP tool `name` with `arguments`."""
        await self._think(emit, f"An MCP server offers {name}; I will ask it.")
        await self._say(emit, f"Let me ask the MCP tool `{name}`.")
        emit({"type": "doing", "id": call_id("demo_mcp"), "name": name, "arguments": arguments})
        self._stop(emit, "tool_use")

    async def _write_file(self, emit: Emit, prompt: str) -> None:
        """Write a short note to the file the prompt names (demo_notes.md if none)."""
        path = _file_name(prompt) or "demo_notes.md"
        await self._think(emit, f"I will write {path} with a short note.")
        await self._say(emit, f"I'll write `{path}`.")
        content = (
            f"# Notes\n\nWritten by the elelem demo model for the prompt:\n\n> {prompt.strip()}\n"
        )
        emit(
            {
                "type": "doing",
                "id": call_id("demo_write"),
                "name": "write",
                "arguments": {"path": path, "content": content},
            }
        )
        self._stop(emit, "tool_use")

    async def _run_python(self, emit: Emit, code: str, variables: bool) -> None:
        """Run `code` with the python tool, and list the namespace too when `variables`."""
        await self._think(emit, "I will look at the namespace and run some Python, in parallel.")
        await self._say(emit, "Let me check the namespace and run the code.")
        if variables:
            emit(
                {"type": "doing", "id": call_id("demo_vars"), "name": "variables", "arguments": {}}
            )
        emit(
            {
                "type": "doing",
                "id": call_id("demo_py"),
                "name": "python",
                "arguments": {"code": code},
            }
        )
        self._stop(emit, "tool_use")

    async def _look_around(self, emit: Emit) -> None:
        """List the workspace and read its README, two calls in parallel."""
        await self._think(
            emit,
            "I should look at the workspace: list the files and read the README, in parallel.",
        )
        await self._say(emit, "Let me look at the workspace.")
        emit(
            {
                "type": "doing",
                "id": call_id("demo_list"),
                "name": "list",
                "arguments": {"path": "."},
            }
        )
        emit(
            {
                "type": "doing",
                "id": call_id("demo_read"),
                "name": "read",
                "arguments": {"path": "README.md"},
            }
        )
        self._stop(emit, "tool_use")

    async def _answer(
        self,
        prompt: str,
        calls: list[ToolCallEntry],
        results: Mapping[str, Mapping[str, object]],
        messages: list[Message],
        emit: Emit,
    ) -> None:
        await self._think(emit, "I have the tool results; now I can answer from them.")
        pictures = {
            m["tool_call_id"]: m.get("images") or []
            for m in _this_turn(messages)
            if m["role"] == "tool"
        }
        parts = []
        for call in calls:
            result = results.get(call.get("id"), {})
            parts.append(_describe(call, result) + _seen(call, pictures.get(str(call.get("id")))))
        text = "\n\n".join(parts) + f"\n\n{_memory(messages)}{how_to(messages)}"
        await self._say(emit, text)
        self._stop(emit, "end_turn")

    async def _unavailable(
        self, emit: Emit, tool: str, modes: str, messages: list[Message]
    ) -> None:
        await self._say(
            emit,
            f"I would use the `{tool}` tool for that, but the current mode does not offer it. "
            f"Switch with `/mode` ({modes}) and ask again.\n\n{_memory(messages)}{how_to(messages)}",
        )
        self._stop(emit, "end_turn")

    async def _think(self, emit: Emit, text: str) -> None:
        for piece in re.findall(r"\S+\s*", text):
            emit({"type": "thinking", "text": piece})
            await asyncio.sleep(self.delay)

    async def _say(self, emit: Emit, text: str, delay: float | None = None) -> None:
        for piece in re.findall(r"\s*\S+\s*|\s+", text):
            emit({"type": "saying", "text": piece})
            await asyncio.sleep(self.delay if delay is None else delay)

    def _stop(self, emit: Emit, reason: str) -> None:
        emit({"type": "stop", "reason": reason, "truncated": False})


def front(messages: list[Message]) -> str:
    """Where the person types, as the system prompt says: "kernel", "magic" or "cli"."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    return next((name for fact, name in FRONTS.items() if fact in system), "cli")


def how_to(messages: list[Message]) -> str:
    """The demo's closing line: what it is, and how to pick a real model where the person
    types (the Elelem kernel, a Python notebook, the command line)."""
    return HOW_TO.format(pick=PICK[front(messages)])


def _seen(call: Mapping[str, object], pictures: Sequence[Mapping[str, object]] | None) -> str:
    """What the demo "sees": the images a call's result brought, with their size."""
    if not pictures:
        return ""
    count, shown = _sizes(pictures)
    return f" I received {count} from `{call.get('name')}`: {shown}."


def _sizes(pictures: Sequence[Mapping[str, object]]) -> tuple[str, str]:
    """`("an image", "640×480 PNG (12 KB)")`: how many images, and their sizes."""
    shown = "; ".join(
        f"{label(p)} ({human_size(len(str(p.get('data') or '')) * 3 // 4, 'rough')})"
        for p in pictures
    )
    return ("an image" if len(pictures) == 1 else f"{len(pictures)} images"), shown


def _mcp_tool(prompt: str, tools: Tools | None) -> tuple[str, dict[str, object]] | None:
    """A read-only MCP tool to call for `prompt` and its arguments, or None."""
    words = set(re.findall(r"[a-z0-9]+", prompt))
    best: tuple[int, str, dict[str, object]] | None = None
    for tool in tools or []:
        spec = function(tool)
        name = spec["name"]
        if not name.startswith("mcp__") or "read-only" not in spec["description"]:
            continue
        arguments = _fill(spec["parameters"] or {}, prompt)
        if arguments is None:
            continue
        score = len(words & set(re.findall(r"[a-z0-9]+", name.lower())))
        if best is None or score > best[0]:
            best = (score, name, arguments)
    return (best[1], best[2]) if best else None


def _fill(schema: Mapping[str, object], prompt: str) -> dict[str, object] | None:
    """Values for the required arguments of `schema` (None when one cannot be guessed)."""
    properties = mapping(schema.get("properties"))
    arguments: dict[str, object] = {}
    for key in items(schema.get("required")):
        if not isinstance(key, str):
            return None
        prop = mapping(properties.get(key))
        kind = prop.get("type")
        if enum := items(prop.get("enum")):
            arguments[key] = enum[0]
        elif kind == "string":
            quoted = re.search(r"[`'\"]([^`'\"]+)[`'\"]", prompt)
            guesses = {"timezone": "UTC", "path": ".", "location": "Paris"}
            arguments[key] = guesses.get(key.lower()) or (quoted.group(1) if quoted else "demo")
        elif kind in ("integer", "number"):
            arguments[key] = 1
        elif kind == "boolean":
            arguments[key] = False
        else:
            return None
    return arguments


def _this_turn(messages: list[Message]) -> list[Message]:
    """Messages from the last user message on."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return messages[i:]
    return []


def _memory(messages: list[Message]) -> str:
    prompts = [m for m in messages if m.get("role") == "user"]
    if len(prompts) < 2:
        return ""
    first = " ".join(str(prompts[0].get("content", "")).split())[:80]
    return (
        f"(This is turn {len(prompts)} of our conversation; your first question was “{first}”.)\n\n"
    )


def _json(content: str | None) -> Mapping[str, object]:
    """A tool message's content: the tool's result as the JSON object the tool returned."""
    try:
        value = json.loads(content or "")
    except ValueError:
        return {"ok": False, "error": str(content)}
    return value if isinstance(value, dict) else {"ok": True, "result": value}


def _code_block(prompt: str) -> str | None:
    match = re.search(r"```(?:python|py)?\n(.*?)```", prompt, re.S)
    return match.group(1).strip() if match else None


def _file_name(prompt: str) -> str | None:
    match = re.search(
        r"[`'\"]?([\w./-]+\.(?:md|txt|py|csv|json|toml|yaml|yml|ipynb))[`'\"]?", prompt
    )
    return match.group(1) if match else None


def _strings(value: object) -> list[str]:
    """The first list of strings (or of dicts with a path/name) found in a tool result."""
    if isinstance(value, list):
        out = [
            v if isinstance(v, str) else str(v.get("path") or v.get("name") or "")
            for v in value
            if isinstance(v, (str, dict))
        ]
        return [s for s in out if s]
    if isinstance(value, dict):
        for key in ("files", "entries", "paths", "matches", "items"):
            if key in value:
                return _strings(value[key])
        for item in value.values():
            found = _strings(item) if isinstance(item, (list, dict)) else []
            if found:
                return found
    return []


def _text(result: Mapping[str, object]) -> str:
    for key in ("content", "output", "stdout", "text", "value", "result"):
        found = result.get(key)
        if isinstance(found, str):
            return found
    return ""


def _describe(call: Mapping[str, object], result: Mapping[str, object]) -> str:
    name, args = call.get("name"), mapping(call.get("arguments"))
    if not result.get("ok", False):
        error = result.get("error") or "it failed"
        if "declined" in str(error) or "not run" in str(error):
            why = re.sub(r"^(not run|declined):\s*", "", str(error))
            return f"The `{name}` call did not run: {why}"
        return f"The `{name}` call failed: {error}"
    describe = _DESCRIBERS.get(str(name))
    if describe is not None:
        return describe(args, result)
    if str(name).startswith("mcp__"):
        _, server, tool = str(name).split("__", 2)
        answer = result.get("structured", result.get("content", ""))
        shown = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        return f"The MCP server **{server}** answered `{tool}` with: `{shown[:300]}`"
    return f"`{name}` returned: {json.dumps(result)[:300]}"


def _listed(args: Mapping[str, object], result: Mapping[str, object]) -> str:
    files = _strings(result)
    shown = ", ".join(f"`{f}`" for f in files[:8])
    more = f" and {len(files) - 8} more" if len(files) > 8 else ""
    return (
        f"The workspace has {len(files)} entr{'y' if len(files) == 1 else 'ies'}: {shown}{more}."
        if files
        else "The workspace is empty."
    )


def _read(args: Mapping[str, object], result: Mapping[str, object]) -> str:
    lines = [re.sub(r"^\s*\d+[\t:|]\s?", "", line) for line in _text(result).splitlines()]
    first = next((line.strip() for line in lines if line.strip()), "")
    total = result.get("total_lines") or len(lines)
    lines_word = "line" if total == 1 else "lines"
    return f"`{args.get('path')}` has {total} {lines_word}; it starts with “{first[:100]}”."


def _wrote(args: Mapping[str, object], result: Mapping[str, object]) -> str:
    return f"I wrote `{args.get('path')}` ({result.get('bytes', '?')} bytes)."


def _ran(args: Mapping[str, object], result: Mapping[str, object]) -> str:
    out = text(result.get("stdout")).strip()
    value = result.get("value") or result.get("repr")
    said = f"Python printed `{out[:200]}`" if out else "Python printed nothing"
    return f"{said}" + (f" and the last expression is `{str(value)[:200]}`." if value else ".")


def _variables(args: Mapping[str, object], result: Mapping[str, object]) -> str:
    variables = result.get("variables")
    listed = [str(k) for k in variables] if isinstance(variables, (dict, list)) else []
    names = _strings(result) or listed
    noun = "variable" if len(names) == 1 else "variables"
    return f"The namespace holds {len(names)} {noun}" + (
        f": {', '.join(f'`{n}`' for n in names[:10])}." if names else "."
    )


#: What the demo says about a successful call of each built-in tool it knows.
_DESCRIBERS: dict[str, Callable[[Mapping[str, object], Mapping[str, object]], str]] = {
    "list": _listed,
    "read": _read,
    "write": _wrote,
    "python": _ran,
    "variables": _variables,
}


class _Streamed(TypedDict):
    """A call the demo streamed, as the session's estimate of the reply counts it."""

    name: str
    arguments: dict[str, object]


class _Counted:
    """The demo's emit, counting what it streams as the session's estimate would and
    cutting the reply at `cap` output tokens; `finish` reports the usage, then the stop."""

    def __init__(self, emit: Emit, cap: int | None):
        self.emit, self.cap = emit, cap
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[_Streamed] = []
        self.ending: ProviderEvent = {"type": "stop", "reason": "end_turn", "truncated": False}
        self.cut = False

    def __call__(self, event: ProviderEvent) -> None:
        if event["type"] == "stop":
            self.ending = event  # after the usage, as a model's stream ends
            return
        if self.cut:
            return
        kept: list[str] | list[_Streamed]
        if event["type"] == "doing":
            kept = self.calls
            self.calls.append({"name": event["name"], "arguments": event["arguments"]})
        elif event["type"] == "saying" or event["type"] == "thinking":
            kept = self.text if event["type"] == "saying" else self.thinking
            kept.append(event["text"])
        else:
            return
        if self.cap is not None and self.output() > self.cap:
            kept.pop()  # this piece would pass the limit: the reply ends before it
            self.cut = True
            return
        self.emit(event)

    def output(self) -> int:
        """The estimated tokens streamed so far (the reply as its assistant message)."""
        if not (self.text or self.thinking or self.calls):
            return 0
        reply: dict[str, object] = {"role": "assistant", "content": "".join(self.text)}
        if self.thinking:
            reply["thinking"] = [{"text": "".join(self.thinking)}]
        if self.calls:
            reply["tool_calls"] = self.calls
        return estimate([reply])

    def finish(self, input_tokens: int) -> None:
        """The usage of the round, then how it ended (`max_tokens` when cut)."""
        if self.cut:
            self.ending = {"type": "stop", "reason": "max_tokens", "truncated": True}
        self.emit({"type": "usage", "input": input_tokens, "output": self.output()})
        self.emit(self.ending)


def _max_tokens(value: Any) -> int | None:
    """The option `max_tokens` as a count of at least 1, None when unset or off."""
    if value is None or str(value).strip().lower() in ("off", "none", "no", "false", "0"):
        return None
    try:
        tokens = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"option max_tokens must be a number or off, not {value!r}") from None
    if tokens < 1:
        raise ConfigError(f"option max_tokens must be a number or off, not {value!r}")
    return tokens
