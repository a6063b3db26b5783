"""The echo provider: replies with the last user message, prefixed with the model name."""

from __future__ import annotations

from typing import Any

from ..events import Emit


class EchoProvider:
    name = "echo"

    def __init__(self, model: str | None = None, **options: Any):
        self.model = model

    async def fetch(self, messages: list[dict], tools: list[dict], emit: Emit) -> None:
        last: dict = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        text = str(last.get("content", ""))
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
