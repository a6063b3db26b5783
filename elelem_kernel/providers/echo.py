"""The echo provider: replies with the last user message, prefixed with the model name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from elelem_kernel.events import Emit, Message, Provider
from elelem_kernel.options import unknown

if TYPE_CHECKING:  # an annotation only: an echo turn loads nothing it does not use
    from elelem_kernel.providers.wire_json import Tools


class EchoProvider(Provider):
    """Says the last user message back, after the model name when one is given."""

    name = "echo"
    known_options: tuple[str, ...] = ()

    def __init__(self, model: str | None = None, **options: Any):
        unknown(self.name, options, self.known_options)
        self.model = model

    async def fetch(self, messages: list[Message], tools: Tools, emit: Emit) -> None:
        last = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        text = str(last.get("content", "")) if last is not None else ""
        if self.model:
            text = f"{self.model}: {text}"
        emit({"type": "saying", "text": text})
        emit(
            {
                "type": "usage",
                "input": sum(len(str(m.get("content", ""))) for m in messages) // 4,
                "output": len(text) // 4,
            }
        )
        emit({"type": "stop", "reason": "end_turn", "truncated": False})
