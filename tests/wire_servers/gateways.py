"""What gateways and proxies in front of a model send about usage and cost, in their shapes.

Chat Completions streams (`reply("openai", round)`) as they arrive through:
- OpenRouter: the last chunk's `usage` carries `cost` (dollars, "credits"), `cost_details`,
  `is_byok` and `completion_tokens_details` (OpenRouter's usage accounting docs);
- a LiteLLM proxy: the cost in the response header `x-litellm-response-cost` (dollars),
  with its other `x-litellm-*` headers (LiteLLM's "Response Headers" docs);
- a proxy or an older OpenAI-compatible server that sends no usage chunk at all;
- a server that sends nonsense counts (below zero).

    server.queue(openrouter(Round(text="Hi", usage={"input": 10, "output": 2}), cost=0.0021))
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from tests.wire_servers.formats import Round, reply
from tests.wire_servers.server import Reply


def _usage_chunk(full: Reply) -> int:
    return next(i for i, chunk in enumerate(full.chunks) if b'"usage"' in chunk)


def _with_usage(full: Reply, change: dict[str, Any]) -> Reply:
    """`full` with its usage chunk's `usage` updated by `change`."""
    at = _usage_chunk(full)
    data = json.loads(full.chunks[at].decode().removeprefix("data: "))
    data["usage"].update(change)
    chunks = list(full.chunks)
    chunks[at] = f"data: {json.dumps(data)}\n\n".encode()
    return dataclasses.replace(full, chunks=chunks)


def openrouter(round: Round, cost: float) -> Reply:
    """`round` as OpenRouter streams it: the usage chunk states what the request cost."""
    return _with_usage(
        reply("openai", round),
        {
            "cost": cost,
            "is_byok": False,
            "cost_details": {"upstream_inference_cost": None},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    )


def litellm(round: Round, cost: float | str) -> Reply:
    """`round` as a LiteLLM proxy streams it: the cost in `x-litellm-response-cost`."""
    full = reply("openai", round)
    headers = {
        **full.headers,
        "x-litellm-response-cost": str(cost),
        "x-litellm-model-id": "0b7c3d6e",
        "x-litellm-model-api-base": "https://api.openai.com/v1",
        "x-litellm-version": "1.77.0",
        "x-litellm-call-id": "3f2a1e0c-6a8f-4c55-9d1e-2b7a9c4f0e11",
    }
    return dataclasses.replace(full, headers=headers)


def without_usage(round: Round) -> Reply:
    """`round` from a server that sends no usage chunk (a proxy, an older server)."""
    full = reply("openai", round)
    chunks = [c for i, c in enumerate(full.chunks) if i != _usage_chunk(full)]
    return dataclasses.replace(full, chunks=chunks)


def with_counts(round: Round, **counts: int) -> Reply:
    """`round` whose usage chunk states `counts` as given (`prompt_tokens=-2099979`)."""
    return _with_usage(reply("openai", round), dict(counts))
