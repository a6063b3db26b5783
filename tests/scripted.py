"""A scripted provider for tests: a queue of rounds, and a history of what it was sent."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from elelem_kernel.events import Provider


class Scripted(Provider):
    """Plays one scripted round per fetch; each round is a list of events (or an exception)."""

    def __init__(self, *rounds: Any, repeat_last: bool = False, delay: float = 0.0):
        self.rounds = list(rounds)
        self.repeat_last = repeat_last
        self.delay = delay
        self.sent: list[dict[str, Any]] = []
        self.model = "scripted"

    async def fetch(self, messages, tools, emit):
        self.sent.append({"messages": copy.deepcopy(messages), "tools": copy.deepcopy(tools)})
        if not self.rounds:
            raise AssertionError("the script ran out of rounds")
        round_ = (
            self.rounds[0] if self.repeat_last and len(self.rounds) == 1 else self.rounds.pop(0)
        )
        for event in round_:
            if isinstance(event, BaseException):
                raise event
            if self.delay:
                await asyncio.sleep(self.delay)
            emit(dict(event))


def say(text: str) -> list[dict]:
    return [
        {"type": "saying", "text": text},
        {"type": "stop", "reason": "end_turn", "truncated": False},
    ]


def call(name: str, arguments: dict | None = None, id: str = "c1", text: str = "") -> list[dict]:
    events: list[dict] = [{"type": "saying", "text": text}] if text else []
    return events + [
        {"type": "doing", "id": id, "name": name, "arguments": arguments or {}},
        {"type": "stop", "reason": "tool_use", "truncated": False},
    ]
