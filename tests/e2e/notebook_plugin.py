"""A provider for the open-notebook tests, loaded as a plugin file by the kernel.

`calls`: round 1 makes the tool calls listed in `calls.json` in the kernel's folder (a
list of [name, arguments]); the next round repeats every tool result of the turn, so the
test reads them in the reply, and writes them whole to `results.json` (the images the
tool messages carried, by type, to `images.json`). Never imported by the test process itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import elelem_kernel
from elelem_kernel.events import Provider

STOP = {"type": "stop", "reason": "end_turn", "truncated": False}


class Calls(Provider):
    def __init__(self, model=None, **options):
        self.model = "calls"

    async def fetch(self, messages, tools, emit):
        if messages[-1].get("role") == "tool":
            results = [m["content"] for m in messages if m.get("role") == "tool"]
            Path("results.json").write_text(json.dumps(results))  # whole, unlike the record
            images = [[i["mime_type"] for i in m.get("images") or []] for m in messages]
            Path("images.json").write_text(json.dumps([i for i in images if i]))
            emit({"type": "saying", "text": json.dumps(results)})
            emit(STOP)
            return
        system = messages[0]["content"]
        Path("system.txt").write_text(system)
        emit({"type": "saying", "text": "reachable: " + str("is reachable" in system)})
        calls = json.loads(Path("calls.json").read_text())
        for i, (name, arguments) in enumerate(calls):
            emit({"type": "doing", "id": f"c{i}", "name": name, "arguments": arguments})
        emit({"type": "stop", "reason": "tool_use", "truncated": False})


@elelem_kernel.configure
def plugin(config):
    config.provider("calls", Calls)
