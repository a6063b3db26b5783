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


def rounds(
    prompt: str, calls: list, results: dict, offered: set[str], front: str = "magic"
) -> list[dict]:
    events: list[dict] = []
    demo_fix.fetch(prompt, calls, results, offered, events.append, front)
    return events


def fix(source: str, error: str) -> tuple[str | None, str]:
    return demo_fix._fix(source, error, CELLS)


def printed(source: str, capsys) -> str:
    exec(compile(source, "<cell>", "exec"), {})
    return capsys.readouterr().out


def test_only_a_fix_or_run_of_a_cell_with_the_notebook_tool_on_offer():
    assert demo_fix.wanted("fix the cell that failed", {"notebook_read"})
    assert not demo_fix.wanted("fix the cell that failed", {"read"})
    assert not demo_fix.wanted("what is in this folder?", {"notebook_read"})


def test_a_misspelt_name_gets_the_closest_known_one_everywhere_in_the_cell():
    fixed = demo_fix._fix(CELLS[1]["source"], CELLS[1]["outputs"][0], CELLS)[0]
    assert fixed == 'print(f"total: {total}")\nprint("again")'
    fixed, why = demo_fix._fix("zzqx()", "NameError: name 'zzqx' is not defined", CELLS)
    assert fixed is None and "define it in a cell above" in why


def test_any_wording_asking_for_a_fix_is_the_failing_cells_fix():
    for prompt in ("fix it", "Can you fix this?", "please fix the error", "what went wrong?"):
        assert demo_fix.wanted(prompt, {"notebook_read"}), prompt
    for prompt in ("fix the failing test", "fix app.py", "is this cell fine?"):
        assert not demo_fix.wanted(prompt, {"notebook_read"}), prompt


def test_a_division_by_zero_is_caught_and_said(capsys):
    fixed, why = fix("print(10/0)", "ZeroDivisionError: division by zero")
    assert fixed is not None and "divides by zero" in why
    assert printed(fixed, capsys) == "cannot divide by zero: the divisor is 0\n"


def test_a_module_used_without_its_import_gets_it(capsys):
    fixed, why = fix("print(math.sqrt(16))", "NameError: name 'math' is not defined")
    assert fixed == "import math\nprint(math.sqrt(16))" and "never imported" in why
    assert printed(fixed, capsys) == "4.0\n"
    assert fix("np.zeros(2)", "NameError: name 'np' is not defined")[0] == (
        "import numpy as np\nnp.zeros(2)"
    )


def test_a_missing_module_is_named_with_its_install_and_other_errors_said_plainly():
    fixed, why = fix("import nosuchthing", "ModuleNotFoundError: No module named 'nosuchthing'")
    assert fixed is None and "%pip install nosuchthing" in why
    fixed, why = fix("open('x')", "FileNotFoundError: [Errno 2] No such file or directory: 'x'")
    assert fixed is None and why == demo_fix.BEYOND


def test_after_the_edit_it_says_how_to_run_it_in_the_persons_front():
    call = {"id": "demo_nb_edit", "name": "notebook_edit"}
    results = {"demo_nb_edit": {"ok": True}}
    kernel = rounds("fix it", [call], results, {"notebook_read"}, "kernel")[0]["text"]
    magic = rounds("fix it", [call], results, {"notebook_read"}, "magic")[0]["text"]
    assert "`/mode verify`" in kernel and "%%elelem" not in kernel
    assert "%%elelem --mode verify\nrun the cell that failed" in magic


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
