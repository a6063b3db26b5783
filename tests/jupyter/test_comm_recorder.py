"""The browser tests' comm recorder (tests/e2e/browser/comms.py) reads both websocket
protocols and refuses a message its comm's schema does not describe: without a browser."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.browser.comms import CommRecorder, decode


def v1_frame(channel: str, msg_type: str, content: dict[str, Any]) -> bytes:
    """A message in `v1.kernel.websocket.jupyter.org`'s layout, as JupyterLab sends it."""
    parts = [channel.encode()] + [
        json.dumps(p).encode() for p in ({"msg_type": msg_type}, {}, {}, content)
    ]
    offsets = [8 * (1 + len(parts) + 1)]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    head = len(offsets).to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets)
    return head + b"".join(parts)


def text_frame(msg_type: str, content: dict[str, Any]) -> str:
    return json.dumps({"channel": "iopub", "header": {"msg_type": msg_type}, "content": content})


def test_both_protocols_decode_to_the_message():
    content = {"comm_id": "c1", "target_name": "elelem.notebook", "data": {"v": 1}}
    binary = decode(v1_frame("shell", "comm_open", content))
    assert binary is not None
    assert binary["channel"] == "shell" and binary["header"]["msg_type"] == "comm_open"
    assert binary["content"] == content
    assert decode(text_frame("comm_open", content))["content"] == content  # type: ignore[index]


def recorded(*frames: tuple[str, str | bytes]) -> CommRecorder:
    recorder = CommRecorder()
    for who, payload in frames:
        recorder._frame(who, payload)
    return recorder


OPEN = {"comm_id": "n1", "target_name": "elelem.notebook", "data": {"v": 1, "cell": "a"}}
OPEN["data"]["turn"] = None


def test_each_message_is_checked_against_its_comms_schema():
    recorder = recorded(
        ("kernel", text_frame("comm_open", OPEN)),
        ("frontend", v1_frame("shell", "comm_msg", {"comm_id": "n1", "data": {"type": "hello"}})),
        ("kernel", text_frame("comm_msg", {"comm_id": "n1", "data": {"id": 1, "op": "read"}})),
        (
            "frontend",
            v1_frame("shell", "comm_msg", {"comm_id": "n1", "data": {"id": 1, "ack": True}}),
        ),
        ("frontend", v1_frame("shell", "comm_msg", {"comm_id": "other", "data": "not ours"})),
        ("frontend", v1_frame("shell", "kernel_info_request", {})),
    )
    assert recorder.checked() == [
        ("elelem.notebook", "NotebookOpen"),
        ("elelem.notebook", "Hello"),
        ("elelem.notebook", "ReadRequest"),
        ("elelem.notebook", "Ack"),
    ]


def test_a_message_off_the_schema_fails_the_check():
    wrong = {"comm_id": "n1", "data": {"id": 1, "ack": True, "extra": 1}}
    recorder = recorded(
        ("kernel", text_frame("comm_open", OPEN)),
        ("frontend", v1_frame("shell", "comm_msg", wrong)),
    )
    with pytest.raises(AssertionError, match="extra"):
        recorder.checked()


def test_a_comm_opened_by_the_wrong_side_fails_the_check():
    recorder = recorded(("frontend", v1_frame("shell", "comm_open", OPEN)))
    with pytest.raises(AssertionError, match="frontend opened elelem.notebook"):
        recorder.checked()
