"""The store's one interface: a notebook written by `append_turn` restores through
`restore`, with what reading the file said before what rebuilding it said."""

from __future__ import annotations

from elelem_kernel.render.static import bundle
from elelem_kernel.store import notebook
from tests.records import record


def append(path, rec: dict) -> None:
    notebook.append_turn(path, rec, *bundle(rec), expected_mtime_ns=notebook.modified_ns(path))


def test_what_append_turn_writes_restore_reads_back(tmp_path):
    path = tmp_path / "nb.ipynb"
    append(path, record("t1", cell="cell-1"))
    append(path, record("t2", "c2", cell="cell-2"))
    rebuilt = notebook.restore(path)
    assert rebuilt.turns == 2 and rebuilt.warnings == []
    assert list(rebuilt.conversations) == ["c1", "c2"] and rebuilt.active == "c2"
    assert notebook.unwritable(path) is None


def test_the_files_warnings_come_before_the_rebuilds(tmp_path):
    path = tmp_path / "nb.ipynb"
    append(path, record("t1", cell="cell-1"))
    append(path, record("t2", cell="cell-2", v=99))
    path.write_text(path.read_text()[:-40])  # cut short: salvaged record by record
    rebuilt = notebook.restore(path)
    assert rebuilt.turns == 1
    assert [w.split(" (")[0] for w in rebuilt.warnings] == [
        "nb.ipynb is not valid JSON",
        "skipped 1 record that could not be restored: cell 2: written by a newer elelem-kernel",
    ]
    assert notebook.unwritable(path).startswith(f"cannot continue {path}: it is not a notebook")


def test_restore_cells_takes_the_frontends_cells_and_warnings():
    cells, warnings = notebook.cells_of(
        {"cells": [{"id": "a", "outputs": [{"metadata": {"elelem": record("t1")}}]}]}, "open"
    )
    rebuilt = notebook.restore_cells(cells, ["said by the frontend", *warnings])
    assert rebuilt.turns == 1 and rebuilt.conversations["c1"][0]["cell"] == "a"
    assert rebuilt.warnings == ["said by the frontend"]
    assert (
        notebook.restored_line(3, 2, "nb.ipynb")
        == "restored 3 turns from nb.ipynb (2 conversations)"
    )
