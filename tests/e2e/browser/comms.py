"""elelem's comm messages as the page's kernel websocket carries them, checked against
the comms' JSON Schemas (tests/comm_schemas.py).

`CommRecorder.attach(lab)` (before the page opens the notebook, as `opened(...,
before_open=...)` does) keeps every frame the page sends to its kernel and every frame it
gets back; `checked()` then checks each comm_open and comm_msg of elelem's comms against
its comm's schema, in the order they went, and says which kinds of message it saw. What
the page sends is what the real extension sent the kernel: the server passes the
messages on unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from tests.comm_schemas import TARGETS, check, sender

#: Websocket frames: (who sent it, the message), in the order the page saw them.
Frame = tuple[str, dict[str, Any]]


def decode(payload: str | bytes) -> dict[str, Any] | None:
    """A kernel websocket frame as a Jupyter message (channel, header, content), in either
    protocol: JSON text, or `v1.kernel.websocket.jupyter.org`'s binary layout (the count of
    offsets, the offsets, then channel, header, parent header, metadata, content, buffers)."""
    if isinstance(payload, str):
        return json.loads(payload)
    data = bytes(payload)
    count = int.from_bytes(data[:8], "little")
    if count < 6:
        return None
    at = [int.from_bytes(data[8 * (i + 1) : 8 * (i + 2)], "little") for i in range(count)]
    parts = [data[at[i] : at[i + 1]] for i in range(5)]
    channel = parts[0].decode("utf-8")
    header, parent, metadata, content = (json.loads(p) for p in parts[1:])
    return {"channel": channel, "header": header, "parent_header": parent, "content": content}


class CommRecorder:
    """The frames of one page's kernel websockets."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []

    def attach(self, lab: Any) -> None:
        """Record the kernel websockets `lab`'s page opens from now on."""
        lab.page.on("websocket", self._socket)

    def _socket(self, socket: Any) -> None:
        if "/api/kernels/" not in socket.url:
            return
        socket.on("framesent", lambda payload: self._frame("frontend", payload))
        socket.on("framereceived", lambda payload: self._frame("kernel", payload))

    def _frame(self, who: str, payload: str | bytes) -> None:
        message = decode(payload)
        if message is not None and message.get("header", {}).get("msg_type", "").startswith(
            "comm_"
        ):
            self.frames.append((who, message))

    def checked(self) -> list[tuple[str, str]]:
        """Check every comm_open and comm_msg of elelem's comms against its schema (an
        AssertionError names the first that does not fit); (comm, message kind) of each."""
        comms: dict[str, str] = {}
        seen: list[tuple[str, str]] = []
        for who, message in self.frames:
            msg_type, content = message["header"]["msg_type"], message["content"]
            if msg_type == "comm_open" and content.get("target_name") in TARGETS:
                target = comms[content["comm_id"]] = content["target_name"]
                assert sender(target, "open") == who, f"{who} opened {target}"
                seen.append((target, check(target, "open", content.get("data"))))
            elif msg_type == "comm_msg" and content.get("comm_id") in comms:
                target = comms[content["comm_id"]]
                seen.append((target, check(target, f"from_{who}", content.get("data"))))
        return seen
