"""The ACP agent's pure pieces: kinds, stop reasons, plans, prompt blocks, client reads."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("acp")

from acp import (  # noqa: E402  # noqa: E402
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)

from elelem_kernel.acp.agent import stop_reason, usage  # noqa: E402
from elelem_kernel.acp.editor_files import numbered  # noqa: E402
from elelem_kernel.acp.prompt_content import PromptError, read_prompt  # noqa: E402
from elelem_kernel.acp.updates import acp_kind, checklist, fenced, notebook_text  # noqa: E402
from elelem_kernel.errors import ToolError  # noqa: E402


def test_tools_get_acp_kinds_by_name_then_by_their_own_kind():
    assert [acp_kind(n, None) for n in ("read", "grep", "edit", "bash", "propose_cell")] == [
        "read",
        "search",
        "edit",
        "execute",
        "other",
    ]
    assert acp_kind("mcp__web__fetch_page", "read") == "fetch"
    assert acp_kind("mcp__db__query", "write") == "edit"
    assert acp_kind("mystery", None) == "other"


def test_stop_reasons_map_to_acp():
    assert stop_reason("end_turn", None) == "end_turn"
    assert stop_reason("max_tokens", None) == "max_tokens"
    assert stop_reason("max_rounds", "stopped after 25 rounds") == "max_turn_requests"
    assert stop_reason("interrupted", None) == "cancelled"
    assert stop_reason("error", None) == "refusal"  # the model's own refusal: no message
    assert stop_reason("error", "anthropic needs an API key") == "end_turn"


def test_usage_and_plan():
    counted = usage({"input": 10, "output": 5, "cache_read": 3})
    assert counted is not None
    assert (counted["totalTokens"], counted["cachedReadTokens"]) == (15, 3)
    assert usage({}) is None
    plan = checklist("Plan:\n- [ ] read the data\n- [x] load it\n* [ ]   clean up\n- not a step")
    assert [(e["content"], e["status"]) for e in plan] == [
        ("read the data", "pending"),
        ("load it", "completed"),
        ("clean up", "pending"),
    ]


def test_prompt_blocks_become_one_text_and_images_are_read():
    text = prompt_text(
        [
            text_block("Explain "),
            resource_link_block("main.py", "file:///w/main.py"),
            resource_block(embedded_text_resource("file:///w/a.md", "has ``` inside")),
        ]
    )
    assert "[main.py](file:///w/main.py)" in text and "file:///w/a.md:\n````\nhas ```" in text
    assert prompt_text([text_block("a"), text_block("b")]) == "ab"
    with pytest.raises(PromptError) as refused:  # "hi" is no image
        prompt_text([image_block("aGk=", "image/png")])
    assert "image 1: image/png: not a PNG, JPEG, GIF or WebP image" in str(refused.value)


def prompt_text(blocks: list) -> str:
    """The prompt's text, as `session/prompt` reads it (the blocks as the client sends them)."""
    sent = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks]
    return asyncio.run(read_prompt(sent)).text


def test_client_reads_are_numbered_and_bounded_like_disk_reads():
    read = numbered("a.txt", "one\ntwo\nthree\n", offset=2, limit=1)
    assert read["content"] == "     2\ttwo" and read["total_lines"] == 3
    assert "offset=3" in read["truncated"]
    assert numbered("e.txt", "")["note"] == "the file is empty"
    with pytest.raises(ToolError, match="past the end"):
        numbered("a.txt", "one\n", offset=5)


def test_notebooks_diff_as_cells_and_fences_hold_backticks():
    nb = '{"cells": [{"cell_type": "code", "id": "c1", "source": ["x = 1\\n", "x"]}]}'
    assert notebook_text(nb) == "# %% [code] c1\nx = 1\nx\n"
    assert notebook_text("not json") == "not json"
    assert fenced("a ```` b").startswith("`````\n")


def test_the_sessions_folder_survives_garbage_and_refuses_odd_ids(tmp_path, monkeypatch):
    from elelem_kernel.errors import ElelemError
    from elelem_kernel.render.static import bundle
    from elelem_kernel.store import acp_sessions as store

    monkeypatch.setenv(store.ENV, str(tmp_path / "sessions"))
    assert "no ACP sessions saved yet" in store.listing_text()
    record = {
        "v": 1,
        "conversation": "c1",
        "turn": "t1",
        "cell": "cell-1",
        "provider": "demo",
        "model": "demo",
        "prompt": "first question",
        "reply": "an answer",
        "rounds": [{"thinking": "", "text": "an answer", "calls": []}],
        "usage": {},
        "stop": "end_turn",
        "started": "2026-01-01T00:00:00+00:00",
        "ms": 5,
    }
    path = store.save_turn("good", "/work/project", record, *bundle(record))
    saved = store.load("good")
    assert (saved.cwd, saved.title, saved.rebuilt.turns) == ("/work/project", "first question", 1)

    (path.parent / "broken.ipynb").write_text('{"cells": [{"outputs": [garbage')
    broken = store.load("broken")
    assert broken.rebuilt.turns == 0 and broken.cwd is None and broken.warnings
    with pytest.raises(ElelemError, match="not a notebook nbformat can read"):
        store.save_turn("broken", "/w", record, *bundle(record))
    listed = {s["id"]: s for s in store.listing()}
    assert listed["good"]["turns"] == 1 and listed["broken"]["turns"] == 0

    with pytest.raises(ValueError, match="invalid session id"):
        store.path_of("../../etc/passwd")
    with pytest.raises(ElelemError, match="no saved session 'missing'"):
        store.load("missing")
