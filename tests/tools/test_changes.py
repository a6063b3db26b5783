"""What a turn changed is kept in its record, bounded, so it can be reverted."""

from __future__ import annotations

import asyncio
import hashlib

from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.assembly.workspace_tools import add_workspace_tools
from elelem_kernel.tools import changes
from tests.scripted import Scripted, call, say


def test_a_large_text_is_not_kept_and_says_so():
    extras: dict = {}
    changes.remember(extras, {"kind": "file", "path": "a", "before": "x" * (changes.MAX_TEXT + 1)})
    changes.remember(extras, {"kind": "file", "path": "b", "before": "small"})
    big, small = extras["changes"]
    assert "before" not in big and "too large" in big["too_large"]
    assert small["before"] == "small"


def test_a_turn_keeps_at_most_its_budget():
    extras: dict = {}
    text = "y" * changes.MAX_TEXT
    for i in range(changes.MAX_TURN // changes.MAX_TEXT + 1):
        changes.remember(extras, {"kind": "file", "path": str(i), "before": text})
    kept = [c for c in extras["changes"] if "before" in c]
    assert len(kept) == changes.MAX_TURN // changes.MAX_TEXT
    assert "too_large" in extras["changes"][-1]


def test_file_before_tells_created_binary_and_text(tmp_path):
    assert changes.file_before(tmp_path / "new.txt") == {"before": None, "created": True}
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    assert "not kept" in changes.file_before(tmp_path / "bin")["too_large"]
    (tmp_path / "t.txt").write_text("hello\n")
    assert changes.file_before(tmp_path / "t.txt") == {"before": "hello\n"}


def test_the_turn_record_keeps_what_write_and_edit_replaced(tmp_path):
    (tmp_path / "notes.md").write_text("old text\n")
    provider = Scripted(
        call("write", {"path": "made.md", "content": "new file\n"}, id="w"),
        call("edit", {"path": "notes.md", "old": "old", "new": "new"}, id="e"),
        call("edit", {"path": "notes.md", "old": "absent", "new": "x"}, id="f"),
        say("done"),
    )
    toolbox = Toolbox()
    session = Session(provider, toolbox, workspace=tmp_path, mode="auto")
    add_workspace_tools(session.toolbox, session.tool_context)
    result = asyncio.run(session.turn("change things"))
    made, notes = result.record["changes"]
    assert made.pop("after_sha") == hashlib.sha256(b"new file\n").hexdigest()
    assert notes.pop("after_sha") == hashlib.sha256(b"new text\n").hexdigest()
    assert [made, notes] == [
        {
            "kind": "file",
            "action": "write",
            "path": "made.md",
            "before": None,
            "created": True,
            "after": "new file\n",
        },
        {
            "kind": "file",
            "action": "edit",
            "path": "notes.md",
            "before": "old text\n",
            "after": "new text\n",
        },
    ]  # the failed edit changed nothing and is not listed; `after` is what /redo writes
    assert session.tool_context.turn_extras == {}
