"""The stub provider: the smallest model that exercises the whole contract.

Round one thinks, says "let me check." and calls the first offered tool; once a tool
result is in the messages it says "done.".
"""

from __future__ import annotations

from typing import Any

from elelem_kernel.events import Emit, Message, Provider
from elelem_kernel.options import unknown
from elelem_kernel.providers.wire_json import Tools, function


class StubProvider(Provider):
    """Thinks, says and calls the first offered tool; then says "done."."""

    name = "stub"
    known_options: tuple[str, ...] = ()

    def __init__(self, model: str | None = None, **options: Any):
        unknown(self.name, options, self.known_options)
        self.model = model or "stub"

    async def fetch(self, messages: list[Message], tools: Tools, emit: Emit) -> None:
        if messages and messages[-1].get("role") == "tool" or not tools:
            emit({"type": "saying", "text": "done."})
            emit({"type": "usage", "input": 10, "output": 1})
            emit({"type": "stop", "reason": "end_turn", "truncated": False})
            return
        emit({"type": "thinking", "text": "I should look first."})
        emit({"type": "saying", "text": "let me check."})
        name = function(tools[0])["name"]
        emit({"type": "doing", "id": "stub_1", "name": name, "arguments": {}})
        emit({"type": "usage", "input": 10, "output": 3})
        emit({"type": "stop", "reason": "tool_use", "truncated": False})
