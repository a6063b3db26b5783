"""Providers and tools for the Jupyter front tests, loaded as a plugin file by the kernel.

Copied into `<kernel cwd>/.agents/plugins/`; never imported by the test process itself.
"""

from __future__ import annotations

import asyncio

import elelem_kernel
from elelem_kernel.events import Provider

XSS = "<img src=x onerror=alert(1)> <script>alert(2)</script>"
#: A command longer than a line, with a sequence that would erase the line it is on.
LONG_COMMAND = "echo " + "x" * 300 + " && touch end-marker\n: \x1b[2K"
STOP = {"type": "stop", "reason": "end_turn", "truncated": False}


class Stream(Provider):
    """2,000 small deltas spread over about a second, like a fast model."""

    def __init__(self, model=None, **options):
        self.model = model or "stream-1"

    async def fetch(self, messages, tools, emit):
        for i in range(2000):
            emit({"type": "saying", "text": f"w{i} "})
            if i % 40 == 0:
                await asyncio.sleep(0.02)
        emit({"type": "usage", "input": 10, "output": 2000})
        emit(STOP)


class Slow(Provider):
    """Says a little, then takes a minute: something to interrupt."""

    def __init__(self, model=None, **options):
        self.model = model or "slow-1"

    async def fetch(self, messages, tools, emit):
        emit({"type": "saying", "text": "partial answer"})
        await asyncio.sleep(60)
        emit({"type": "saying", "text": " never shown"})
        emit(STOP)


class Caller(Provider):
    """Round 1 calls tool `name`; round 2 repeats what the tool returned."""

    def __init__(self, name, text="", arguments=None):
        self.name = name
        self.text = text
        self.arguments = arguments or {"path": "made.txt"}
        self.model = f"calls-{name}"

    async def fetch(self, messages, tools, emit):
        last = messages[-1]
        if last.get("role") == "tool":
            emit({"type": "saying", "text": f"{self.text}tool said: {last['content']}"})
            emit(STOP)
            return
        emit({"type": "doing", "id": "t1", "name": self.name, "arguments": self.arguments})
        emit({"type": "stop", "reason": "tool_use", "truncated": False})


def add_tools(session):
    @session.toolbox.add(
        "touch",
        "create an empty file",
        {"path": {"type": "string"}},
        required=["path"],
        kind="write",
    )
    def touch(args):
        with open(args["path"], "w"):
            pass
        return {"created": args["path"]}

    @session.toolbox.add("html", "return some HTML", {"path": {"type": "string"}}, kind="read")
    def html(args):
        return {"output": XSS}


@elelem_kernel.configure
def plugin(config):
    config.provider("stream", lambda model=None, **o: Stream(model))
    config.provider("slow", lambda model=None, **o: Slow(model))
    config.provider("toucher", lambda model=None, **o: Caller("touch"))
    config.provider("xss", lambda model=None, **o: Caller("html", text=XSS + " "))
    config.provider(
        "napper",
        lambda model=None, **o: Caller("bash", arguments={"command": "sleep 3 && touch late.txt"}),
    )
    config.provider(
        "longcmd", lambda model=None, **o: Caller("bash", arguments={"command": LONG_COMMAND})
    )
    config.provider(
        "proposer",
        lambda model=None, **o: Caller("propose_cell", arguments={"source": "x = 1  # proposed"}),
    )
    config.provider(
        "grepper",
        lambda model=None, **o: Caller("grep", arguments={"pattern": r"(?=a)(a+)+$"}),
    )
    config.provider(
        "pythoner", lambda model=None, **o: Caller("python", arguments={"code": "shared = 99"})
    )
    config.setup("front-test-tools", add_tools)
