"""The client's lines, checked before the connection takes them.

ACP is newline-delimited JSON-RPC 2.0, one message per line. Each line is checked here: a
line that is not JSON is answered with -32700, a JSON value that is not one request,
notification or response with -32600 (a batch too: ACP does not use batches, and its
TypeScript SDK answers one the same way; `null` and numbers too, where the Python SDK's
loop would die), and only good messages reach the connection (jsonrpc.py). `NaN` and
`Infinity` are not JSON, and an id too large for a float (`1e400`) cannot be answered
with JSON: both are refused here, never reaching a handler whose answer could not be
written.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from elelem_kernel.acp.jsonrpc import INVALID_REQUEST, PARSE_ERROR, Id, line
from elelem_kernel.text import shorten

if TYPE_CHECKING:
    from elelem_kernel.acp.messages import Json


def error(message_id: Id, code: int, text: str) -> bytes:
    """A JSON-RPC error response as one line."""
    return line({"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}})


def check(data: bytes) -> dict[str, Json] | bytes:
    """The message `data` holds when it is one JSON-RPC message, else the error line
    answering it (parsed once: a prompt's line may carry megabytes of images)."""
    try:
        message = json.loads(data, parse_constant=_not_json)
    except RecursionError:
        return error(None, INVALID_REQUEST, "invalid request: the message is nested too deeply")
    except ValueError as e:  # UnicodeDecodeError is one too
        return error(
            None, PARSE_ERROR, f"parse error: the line is not JSON ({shorten(str(e), 80)})"
        )
    if isinstance(message, list):
        return error(
            None,
            INVALID_REQUEST,
            "invalid request: batches are not used in ACP; send one message per line",
        )
    if not isinstance(message, dict):
        kind = "null" if message is None else type(message).__name__
        return error(None, INVALID_REQUEST, f"invalid request: a message is an object, not {kind}")
    message_id = message.get("id")
    if isinstance(message_id, bool) or not isinstance(message_id, (str, int, float, type(None))):
        return error(None, INVALID_REQUEST, "invalid request: id must be a string, number or null")
    if isinstance(message_id, float) and not math.isfinite(message_id):
        return error(None, INVALID_REQUEST, "invalid request: id must be a finite number")
    method = message.get("method")
    if "method" in message and not isinstance(method, str):
        return error(message_id, INVALID_REQUEST, "invalid request: method must be a string")
    if method is None and "id" not in message:
        return error(None, INVALID_REQUEST, "invalid request: no method and no id")
    return message


def _not_json(constant: str) -> float:
    raise ValueError(f"{constant} is not JSON")
