"""Appending turns in place gives the very bytes of a full rewrite, and falls back to one."""

from __future__ import annotations

import nbformat
import pytest

from elelem_kernel.render.static import bundle
from elelem_kernel.store import in_place as append
from elelem_kernel.store import ipynb_json
from elelem_kernel.store.notebook import append_turn
from tests import records


def record(turn: str, text: str = "answer") -> dict:
    """A turn with a cell, a prompt of two lines, ünïcode and quotes, and a list."""
    return records.record(
        turn,
        cell=f"cell-{turn}",
        prompt=f'question {turn}\nwith a second line, ünïcode and "quotes"',
        reply=f"{text} {turn}",
        rounds=[{"thinking": "", "text": f"{text} {turn}\n\n- a list", "calls": []}],
    )


def add(path, turn: str, full: bool) -> None:
    if full:
        append.forget(path)  # as if another process had written it: a full rewrite
    mtime = path.stat().st_mtime_ns if path.exists() else None
    append_turn(path, record(turn), *bundle(record(turn)), expected_mtime_ns=mtime)


@pytest.mark.parametrize("start", ["new", "python"])
def test_appending_in_place_writes_the_bytes_of_a_full_rewrite(tmp_path, start):
    path, reference = tmp_path / "nb.ipynb", tmp_path / "reference.ipynb"
    if start == "python":
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        nbformat.write(nb, path)
    for i in range(6):
        if path.exists():  # the same file, appended to by a full rewrite
            reference.write_bytes(path.read_bytes())
            add(reference, f"t{i}", full=True)
        add(path, f"t{i}", full=False)
        if i:
            assert path.read_bytes() == reference.read_bytes(), i
    cells = nbformat.read(path, 4).cells
    assert [c.id for c in cells[-6:]] == [f"cell-t{i}" for i in range(6)]


def test_the_second_append_neither_reads_nor_rewrites_the_notebook(tmp_path, monkeypatch):
    path = tmp_path / "nb.ipynb"
    add(path, "t0", full=False)
    add(path, "t1", full=False)

    def no(*args, **kwargs):
        raise AssertionError("read or rewrote the whole notebook")

    monkeypatch.setattr(nbformat, "read", no)
    monkeypatch.setattr(nbformat, "write", no)
    monkeypatch.setattr(ipynb_json, "read", no)
    monkeypatch.setattr(ipynb_json, "write", no)
    add(path, "t2", full=False)
    assert [c.id for c in nbformat.reads(path.read_text(), 4).cells] == [
        "cell-t0",
        "cell-t1",
        "cell-t2",
    ]


def test_a_file_changed_by_someone_else_is_rewritten_in_full(tmp_path):
    path = tmp_path / "nb.ipynb"
    add(path, "t0", full=False)
    nb = nbformat.read(path, 4)
    nb.metadata["edited"] = "elsewhere, same length? no matter"
    nbformat.write(nb, path)  # another writer: new mtime, new ending
    add(path, "t1", full=False)
    expected = tmp_path / "expected.ipynb"
    nbformat.write(nb, expected)
    add(expected, "t1", full=True)
    assert path.read_bytes() == expected.read_bytes()
    assert nbformat.read(path, 4).metadata["edited"].startswith("elsewhere")


def test_a_taken_cell_id_goes_through_the_full_rewrite(tmp_path, monkeypatch):
    path = tmp_path / "nb.ipynb"
    add(path, "t0", full=False)
    add(path, "t1", full=False)
    writes = []
    real = ipynb_json.write
    monkeypatch.setattr(ipynb_json, "write", lambda *a, **k: writes.append(1) or real(*a, **k))
    add(path, "t0", full=False)  # the same cell id again: the new cell gets another
    assert writes == [1]
    ids = [c.id for c in nbformat.read(path, 4).cells]
    assert len(ids) == 3 == len(set(ids))


def test_a_failed_write_puts_the_old_ending_back(tmp_path, monkeypatch):
    path = tmp_path / "nb.ipynb"
    add(path, "t0", full=False)
    before = path.read_bytes()

    class FullDisk:
        """The file, but the first write stops halfway with ENOSPC."""

        def __init__(self, f):
            self.f, self.failed = f, False

        def write(self, data):
            if not self.failed:
                self.failed = True
                self.f.write(data[: len(data) // 2])
                raise OSError(28, "No space left on device")
            return self.f.write(data)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(append, "open", lambda *a: FullDisk(open(*a)), raising=False)
    with pytest.raises(OSError, match="No space"):
        add(path, "t1", full=False)
    assert path.read_bytes() == before
