"""The demo model's fix of the cell that failed: what it proposes, and when it declines."""

from __future__ import annotations

from elelem_kernel.providers import demo_fix

CELLS = [
    {"index": 0, "id": "a", "source": "prices = [1, 2]\ntotal = sum(prices)", "outputs": []},
    {
        "index": 1,
        "id": "b",
        "source": 'pritn(f"total: {total}")\npritn("again")',
        "outputs": ["NameError: name 'pritn' is not defined\nTraceback ..."],
    },
]


def rounds(prompt: str, calls: list, results: dict, offered: set[str]) -> list[dict]:
    events: list[dict] = []
    demo_fix.fetch(prompt, calls, results, offered, events.append)
    return events


def test_only_a_fix_or_run_of_a_cell_with_the_notebook_tool_on_offer():
    assert demo_fix.wanted("fix the cell that failed", {"notebook_read"})
    assert not demo_fix.wanted("fix the cell that failed", {"read"})
    assert not demo_fix.wanted("what is in this folder?", {"notebook_read"})


def test_a_misspelt_name_gets_the_closest_known_one_everywhere_in_the_cell():
    fixed = demo_fix._fix(CELLS[1]["source"], CELLS[1]["outputs"][0], CELLS)
    assert fixed == 'print(f"total: {total}")\nprint("again")'
    assert demo_fix._fix("1/0", "ZeroDivisionError: division by zero", CELLS) is None
    assert demo_fix._fix("zzqx()", "NameError: name 'zzqx' is not defined", CELLS) is None


def test_read_then_propose_the_edit_of_the_failing_cell():
    offered = {"notebook_read", "notebook_edit"}
    first = rounds("fix the cell that failed", [], {}, offered)
    assert [e["name"] for e in first if e["type"] == "doing"] == ["notebook_read"]
    call = {"id": "demo_nb_read", "name": "notebook_read"}
    second = rounds("fix the cell that failed", [call], {"demo_nb_read": {"cells": CELLS}}, offered)
    (edit,) = [e for e in second if e["type"] == "doing"]
    assert edit["arguments"] == {"cell": "b", "source": 'print(f"total: {total}")\nprint("again")'}


def test_running_needs_an_execute_mode_and_says_so():
    call = {"id": "demo_nb_read", "name": "notebook_read"}
    said = rounds(
        "run the cell that failed", [call], {"demo_nb_read": {"cells": CELLS}}, {"notebook_read"}
    )
    assert "verify or auto" in said[0]["text"] and said[-1]["reason"] == "end_turn"


def test_nothing_failed_nothing_to_fix():
    call = {"id": "demo_nb_read", "name": "notebook_read"}
    clean = [{**CELLS[0]}]
    said = rounds(
        "fix the cell that failed", [call], {"demo_nb_read": {"cells": clean}}, {"notebook_read"}
    )
    assert "nothing to fix" in said[0]["text"]
