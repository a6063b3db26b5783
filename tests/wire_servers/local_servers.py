"""What local model servers answer about their context window, in their real shapes.

Model-info answers for `WireServer.info` (path → JSON), and the error bodies each server
sends when a request does not fit its window (`overflow_reply`). Shapes copied from:
llama.cpp `tools/server` (`/v1/models` with `meta`, `/props`, `exceed_context_size_error`),
vLLM's OpenAI server (`max_model_len`, "This model's maximum context length is ..."),
LM Studio's REST API v0 (`/api/v0/models/{model}`), OpenAI (`context_length_exceeded`) and
Anthropic ("prompt is too long").

    server.info.update(llama_cpp_info("smollm2", n_ctx=8192))
    server.queue(overflow_reply("llama.cpp", requested=24075, limit=8192))
"""

from __future__ import annotations

import json
from typing import Any

from tests.wire_servers.server import Reply


def llama_cpp_info(model: str, n_ctx: int, slot_ctx: int | None = None) -> dict[str, Any]:
    """llama-server's `GET /v1/models` and `GET /props`; `slot_ctx`: one slot's context
    (`n_ctx / --parallel`), default all of it."""
    models = {
        "models": [
            {"name": model, "model": model, "type": "model", "capabilities": ["completion"]}
        ],
        "object": "list",
        "data": [
            {
                "id": model,
                "aliases": [model],
                "object": "model",
                "created": 1764000000,
                "owned_by": "llamacpp",
                "meta": {
                    "vocab_type": 2,
                    "n_vocab": 49152,
                    "n_ctx": n_ctx,
                    "n_ctx_train": 8192 * 4,
                    "n_embd": 576,
                    "n_params": 134515008,
                    "size": 138021120,
                },
            }
        ],
    }
    props = {
        "default_generation_settings": {
            "id": 0,
            "id_task": -1,
            "n_ctx": slot_ctx or n_ctx,
            "speculative": False,
            "is_processing": False,
            "params": {"n_predict": -1, "seed": 4294967295, "temperature": 0.8, "top_p": 0.95},
        },
        "total_slots": max(1, n_ctx // (slot_ctx or n_ctx)),
        "model_path": f"/models/{model}.gguf",
        "chat_template": "{{ messages }}",
        "modalities": {"vision": False, "audio": False},
        "build_info": "b6000-wire",
    }
    return {"/v1/models": models, "/props": props}


def vllm_info(model: str, max_model_len: int) -> dict[str, Any]:
    """vLLM's `GET /v1/models`."""
    entry = {
        "id": model,
        "object": "model",
        "created": 1764000000,
        "owned_by": "vllm",
        "root": model,
        "parent": None,
        "max_model_len": max_model_len,
        "permission": [
            {"id": "modelperm-wire", "object": "model_permission", "allow_sampling": True}
        ],
    }
    return {"/v1/models": {"object": "list", "data": [entry]}}


def lmstudio_info(model: str, loaded: int, maximum: int = 131072) -> dict[str, Any]:
    """LM Studio: `/v1/models` (no window there) and `GET /api/v0/models/{model}`."""
    listing = {
        "object": "list",
        "data": [{"id": model, "object": "model", "owned_by": "organization_owner"}],
    }
    detail = {
        "id": model,
        "object": "model",
        "type": "llm",
        "publisher": "lmstudio-community",
        "arch": "llama",
        "compatibility_type": "gguf",
        "quantization": "Q4_K_M",
        "state": "loaded",
        "max_context_length": maximum,
        "loaded_context_length": loaded,
    }
    return {"/v1/models": listing, f"/api/v0/models/{model}": detail}


def overflow_body(server: str, requested: int, limit: int) -> dict[str, Any]:
    """The error body `server` sends for a request of `requested` tokens over `limit`."""
    if server == "llama.cpp":
        return {
            "error": {
                "code": 400,
                "message": f"request ({requested} tokens) exceeds the available context size "
                f"({limit} tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": requested,
                "n_ctx": limit,
            }
        }
    if server == "vllm":
        return {
            "error": {
                "message": f"This model's maximum context length is {limit} tokens. However, "
                f"your request has {requested} input tokens. Please reduce the length of the "
                "input messages.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        }
    if server == "openai":
        return {
            "error": {
                "message": f"This model's maximum context length is {limit} tokens. However, "
                f"your messages resulted in {requested} tokens. Please reduce the length of "
                "the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
    if server == "anthropic":
        return {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {requested} tokens > {limit} maximum",
            },
        }
    raise ValueError(f"no overflow body for {server!r}")


def overflow_reply(server: str, requested: int, limit: int) -> Reply:
    """`overflow_body` as the HTTP 400 answer."""
    body = json.dumps(overflow_body(server, requested, limit)).encode()
    return Reply(400, {"content-type": "application/json"}, [body], stream=False)
