"""Scripted replies in each provider's wire format, built from a neutral `Round`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tests.wire_servers.server import Reply

FORMATS = ("anthropic", "openai", "responses", "ollama")
_SSE = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
_NDJSON = {"content-type": "application/x-ndjson"}


@dataclass
class Round:
    """One model round, in neutral terms; `reply(fmt, round)` renders it in a format.

    `calls` holds `(name, arguments)` or `(name, arguments, id)`; `usage` uses the
    provider event keys (input, output, cache_read, cache_write); `stop` is the raw wire
    stop reason (default: the format's tool or end reason).
    """

    text: str = ""
    thinking: str = ""
    calls: Sequence[tuple] = ()
    usage: Mapping[str, int] | None = None
    stop: str | None = None
    signature: str = "c2lnbmF0dXJlLTE="
    redacted: str | None = None
    encrypted: str = "ZW5jcnlwdGVkLTE="
    reasoning_field: str = "reasoning_content"
    ids: bool = True
    model: str = "wire"  # the model the server says answered

    def usage_or_default(self) -> dict[str, int]:
        return {"input": 12, "output": 7, "cache_read": 0, "cache_write": 0, **(self.usage or {})}

    def call_list(self, prefix: str) -> list[tuple[str, dict, str]]:
        return [
            (c[0], c[1], c[2] if len(c) > 2 else f"{prefix}{i + 1}")
            for i, c in enumerate(self.calls)
        ]


def reply(fmt: str, round: Round) -> Reply:
    """`round` as a streamed reply in wire format `fmt`."""
    builders = {
        "anthropic": _anthropic,
        "openai": _openai,
        "responses": _responses,
        "ollama": _ollama,
    }
    if fmt not in builders:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    return builders[fmt](round)


def error_reply(
    fmt: str,
    status: int,
    message: str = "scripted failure",
    *,
    retry_after: float | str | None = None,
    kind: str | None = None,
) -> Reply:
    """An HTTP error answer with the format's error body (and `retry-after` if given)."""
    kind = kind or _ANTHROPIC_KINDS.get(status, "api_error")
    if fmt == "anthropic":
        body: Any = {"type": "error", "error": {"type": kind, "message": message}}
    elif fmt == "ollama":
        body = {"error": message}
    else:
        body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    headers = {"content-type": "application/json"}
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    return Reply(status, headers, [json.dumps(body).encode()], stream=False)


def error_event(fmt: str, message: str = "Overloaded", kind: str = "overloaded_error") -> bytes:
    """An error sent inside a stream that started with HTTP 200."""
    if fmt == "anthropic":
        return _event("error", {"type": "error", "error": {"type": kind, "message": message}})
    if fmt == "openai":
        return _data({"error": {"message": message, "type": kind, "code": None}})
    if fmt == "responses":
        return _event("error", {"type": "error", "code": kind, "message": message, "param": None})
    return _line({"error": message})


_ANTHROPIC_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _pieces(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def _halves(arguments: dict) -> list[str]:
    if not arguments:
        return []
    raw = json.dumps(arguments, ensure_ascii=False)
    return [raw[: len(raw) // 2], raw[len(raw) // 2 :]]


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: `data` as JSON (a str goes as is), with an optional name."""
    payload = data if isinstance(data, str) else _json(data)
    return (f"event: {event}\n" if event else "").encode() + f"data: {payload}\n\n".encode()


def ndjson_line(data: Any) -> bytes:
    """One NDJSON line."""
    return (_json(data) + "\n").encode()


def stream_reply(fmt: str, chunks: Sequence[bytes]) -> Reply:
    """A hand-written stream in format `fmt` (SSE or NDJSON headers), one write per chunk."""
    return Reply(headers=dict(_NDJSON if fmt == "ollama" else _SSE), chunks=list(chunks))


def _event(name: str, data: Any) -> bytes:
    return sse(data, name)


def _data(data: Any) -> bytes:
    return sse(data)


def _line(data: Any) -> bytes:
    return ndjson_line(data)


def _anthropic(r: Round) -> Reply:
    u = r.usage_or_default()
    out: list[bytes] = []
    fresh = u["input"] - u["cache_read"] - u["cache_write"]
    usage = {
        "input_tokens": fresh,
        "cache_read_input_tokens": u["cache_read"],
        "cache_creation_input_tokens": u["cache_write"],
        "output_tokens": 1,
    }
    message = {
        "id": "msg_wire",
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": [],
        "stop_reason": None,
        "usage": usage,
    }
    out.append(_event("message_start", {"type": "message_start", "message": message}))
    out.append(_event("ping", {"type": "ping"}))
    blocks: list[tuple[dict, list[dict]]] = []
    if r.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(r.thinking)]
        deltas.append({"type": "signature_delta", "signature": r.signature})
        blocks.append(({"type": "thinking", "thinking": ""}, deltas))
    if r.redacted is not None:
        blocks.append(({"type": "redacted_thinking", "data": r.redacted}, []))
    if r.text:
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(r.text)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for name, arguments, call_id in r.call_list("toolu_"):
        parts = _halves(arguments) or [""]
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in parts]
        blocks.append(({"type": "tool_use", "id": call_id, "name": name, "input": {}}, deltas))
    for i, (start, deltas) in enumerate(blocks):
        out.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            )
        )
        for delta in deltas:
            out.append(
                _event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": delta},
                )
            )
        out.append(_event("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = r.stop or ("tool_use" if r.calls else "end_turn")
    out.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": u["output"]},
            },
        )
    )
    out.append(_event("message_stop", {"type": "message_stop"}))
    return Reply(headers=dict(_SSE), chunks=out)


def _openai(r: Round) -> Reply:
    u = r.usage_or_default()
    base = {
        "id": "chatcmpl-wire",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": r.model,
    }
    out: list[bytes] = []

    def add(delta: dict, finish: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        out.append(_data({**base, "choices": [choice]}))

    add({"role": "assistant", "content": ""})
    for p in _pieces(r.thinking):
        add({r.reasoning_field: p})
    for p in _pieces(r.text):
        add({"content": p})
    calls = r.call_list("call_")
    for i, (name, _, call_id) in enumerate(calls):
        head: dict[str, Any] = {
            "index": i,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        if r.ids:
            head["id"] = call_id
        add({"tool_calls": [head]})
    halves = [_halves(arguments) for _, arguments, _ in calls]
    for part in range(2):
        for i, parts in enumerate(halves):
            if parts:
                add({"tool_calls": [{"index": i, "function": {"arguments": parts[part]}}]})
    add({}, r.stop or ("tool_calls" if calls else "stop"))
    usage = {
        "prompt_tokens": u["input"],
        "completion_tokens": u["output"],
        "total_tokens": u["input"] + u["output"],
        "prompt_tokens_details": {"cached_tokens": u["cache_read"]},
    }
    out.append(_data({**base, "choices": [], "usage": usage}))
    out.append(b"data: [DONE]\n\n")
    return Reply(headers=dict(_SSE), chunks=out)


def _responses(r: Round) -> Reply:
    u = r.usage_or_default()
    out: list[bytes] = []
    seq = 0

    def add(kind: str, **data: Any) -> None:
        nonlocal seq
        out.append(_event(kind, {"type": kind, "sequence_number": seq, **data}))
        seq += 1

    response: dict[str, Any] = {
        "id": "resp_wire",
        "object": "response",
        "status": "in_progress",
        "model": r.model,
        "output": [],
    }
    add("response.created", response=response)
    items: list[dict] = []
    if r.thinking:
        item = {"id": "rs_wire", "type": "reasoning", "summary": []}
        add("response.output_item.added", output_index=len(items), item=item)
        for p in _pieces(r.thinking):
            add(
                "response.reasoning_summary_text.delta",
                item_id="rs_wire",
                output_index=len(items),
                summary_index=0,
                delta=p,
            )
        done = {
            **item,
            "summary": [{"type": "summary_text", "text": r.thinking}],
            "encrypted_content": r.encrypted,
        }
        add("response.output_item.done", output_index=len(items), item=done)
        items.append(done)
    if r.text:
        item = {
            "id": "msg_wire",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        add("response.output_item.added", output_index=len(items), item=item)
        for p in _pieces(r.text):
            add(
                "response.output_text.delta",
                item_id="msg_wire",
                output_index=len(items),
                content_index=0,
                delta=p,
            )
        done = {
            **item,
            "status": "completed",
            "content": [{"type": "output_text", "text": r.text, "annotations": []}],
        }
        add("response.output_item.done", output_index=len(items), item=done)
        items.append(done)
    for i, (name, arguments, call_id) in enumerate(r.call_list("call_")):
        item = {
            "id": f"fc_wire{i + 1}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        add("response.output_item.added", output_index=len(items), item=item)
        for p in _halves(arguments):
            add(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=len(items),
                delta=p,
            )
        raw = json.dumps(arguments, ensure_ascii=False) if arguments else ""
        done = {**item, "status": "completed", "arguments": raw}
        add("response.output_item.done", output_index=len(items), item=done)
        items.append(done)
    usage = {
        "input_tokens": u["input"],
        "input_tokens_details": {"cached_tokens": u["cache_read"]},
        "output_tokens": u["output"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u["input"] + u["output"],
    }
    final = {**response, "output": items, "usage": usage}
    if r.stop in (None, "completed"):
        add("response.completed", response={**final, "status": "completed"})
    elif r.stop == "failed":
        error = {"code": "server_error", "message": "scripted failure"}
        add("response.failed", response={**final, "status": "failed", "error": error})
    else:
        add(
            "response.incomplete",
            response={**final, "status": "incomplete", "incomplete_details": {"reason": r.stop}},
        )
    return Reply(headers=dict(_SSE), chunks=out)


def _ollama(r: Round) -> Reply:
    u = r.usage_or_default()
    base = {"model": r.model, "created_at": "2026-01-01T00:00:00Z"}
    out: list[bytes] = []

    def add(message: dict, **extra: Any) -> None:
        out.append(
            _line(
                {
                    **base,
                    "message": {"role": "assistant", "content": "", **message},
                    "done": False,
                    **extra,
                }
            )
        )

    for p in _pieces(r.thinking):
        add({"thinking": p})
    for p in _pieces(r.text):
        add({"content": p})
    calls = []
    for i, (name, arguments, call_id) in enumerate(r.call_list("call_")):
        call: dict[str, Any] = {"function": {"index": i, "name": name, "arguments": arguments}}
        if r.ids:
            call["id"] = call_id
        calls.append(call)
    if calls:
        add({"tool_calls": calls})
    add(
        {},
        done=True,
        done_reason=r.stop or "stop",
        total_duration=1000,
        prompt_eval_count=u["input"],
        eval_count=u["output"],
    )
    return Reply(headers=dict(_NDJSON), chunks=out)
