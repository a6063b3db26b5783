"""The bounded nbclient client, fed kernel messages directly (no kernel)."""

from __future__ import annotations

import nbformat

from elelem_kernel.text import HeadTail
from elelem_kernel.tools.cell_outputs import (
    HEAD_OUTPUTS,
    TAIL_OUTPUTS,
    CellCuts,
    bounded_client,
)


def message(kind: str, **content: object) -> dict:
    return {
        "msg_type": kind,
        "header": {"msg_type": kind},
        "parent_header": {"msg_id": "run-1"},
        "content": content,
    }


def client_and_cell() -> tuple[object, object, dict[int, CellCuts]]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x")]
    cuts: dict[int, CellCuts] = {}
    client = bounded_client(nb, cuts)
    client.reset_execution_trackers()  # what nbclient does before running
    client.clear_before_next_output = False  # and before each cell
    return client, nb.cells[0], cuts


def test_ends_keep_head_and_tail_and_count() -> None:
    ends = HeadTail(5, 4, "")
    for piece in ("abc", "defgh", "ijklmnop", "q"):
        ends.feed(piece)
    assert ends.total == 17 and ends.cut == 8
    assert ends.text() == "abcde\n[... 8 characters cut from the middle of 17 ...]\nnopq"
    small = HeadTail(5, 4, "")
    small.feed("abcdefg")
    assert small.text() == "abcdefg" and small.cut == 0


def test_interleaved_streams_and_many_outputs_stay_bounded() -> None:
    client, cell, cuts = client_and_cell()
    for i in range(4_000):
        name = "stdout" if i % 2 else "stderr"
        client.process_message(message("stream", name=name, text=f"{i:05d}" + "y" * 3_000), cell, 0)
    assert len(cell.outputs) == HEAD_OUTPUTS + TAIL_OUTPUTS
    assert cell.outputs[-1]["text"].startswith("03999y")
    note = cuts[0].note()
    assert f"{4_000 - HEAD_OUTPUTS - TAIL_OUTPUTS:,} outputs left out" in note
    assert "stdout: 6,010,000 characters printed" in note  # every stdout piece was cut
    assert sum(len(o["text"]) for o in cell.outputs) < 100_000


def test_display_updates_reach_outputs_in_the_head() -> None:
    client, cell, cuts = client_and_cell()
    shown = message(
        "display_data", data={"text/plain": "0%"}, metadata={}, transient={"display_id": "bar"}
    )
    client.process_message(shown, cell, 0)
    client.process_message(message("stream", name="stdout", text="working\n"), cell, 0)
    update = message(
        "update_display_data",
        data={"text/plain": "100%"},
        metadata={},
        transient={"display_id": "bar"},
    )
    client.process_message(update, cell, 0)
    assert [o.get("data", {}).get("text/plain") for o in cell.outputs] == ["100%", None]
    assert cuts[0].note() is None
    client.process_message(message("clear_output", wait=False), cell, 0)
    assert cell.outputs == []
