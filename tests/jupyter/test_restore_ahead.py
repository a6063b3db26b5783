"""The notebook file read while the kernel starts: used once, and only while unchanged."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from elelem_kernel.agent.session import Session
from elelem_kernel.jupyter import restore_ahead
from elelem_kernel.jupyter.restore import FRONTEND_KEY, restore_into
from elelem_kernel.store import notebook
from tests.jupyter.test_restore import record, three_turns, turn_cell, write


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Each test is a kernel process of its own: nothing read ahead yet."""
    monkeypatch.setattr(restore_ahead, "_thread", None)
    monkeypatch.setattr(restore_ahead, "_read", None)
    monkeypatch.setattr(restore_ahead, "_wanted", True)


def read_ahead(path: Path | None) -> None:
    thread = restore_ahead.start(lambda: path)
    assert thread is not None
    thread.join(10)


def test_the_first_restore_takes_what_was_read_at_start(tmp_path, monkeypatch):
    path = three_turns(tmp_path / "nb.ipynb")
    read_ahead(path)

    def unread(path: Path):
        raise AssertionError("read again though nothing changed")

    monkeypatch.setattr(notebook, "read_notebook", unread)
    session = Session(None, provider_name="test")
    line = restore_into(session, {}, {"ELELEM_NOTEBOOK": str(path)})
    assert line is not None and line.startswith("restored 3 turns from nb.ipynb")
    assert [t["prompt"] for t in session.conversation.turns] == [
        "question t1",
        "question t2",
        "question t3",
    ]


def test_what_was_read_is_given_once(tmp_path, monkeypatch):
    path = three_turns(tmp_path / "nb.ipynb")
    read_ahead(path)
    taken = restore_ahead.take(path)
    assert taken is not None
    assert (taken.cells, taken.warnings) == notebook.read_notebook(path)
    assert taken.rebuilt.turns == 3
    assert restore_ahead.take(path) is None


def test_a_file_changed_since_is_read_anew(tmp_path, monkeypatch):
    path = three_turns(tmp_path / "nb.ipynb")
    read_ahead(path)
    write(path, [turn_cell(record(f"t{i}"), f"cell-{i}") for i in range(1, 6)])
    os.utime(path, ns=(1, 1))  # even a write within the clock's step changes the time
    assert restore_ahead.take(path) is None
    session = Session(None, provider_name="test")
    line = restore_into(session, {}, {"ELELEM_NOTEBOOK": str(path)})
    assert line is not None and line.startswith("restored 5 turns")


def test_another_file_is_not_given_what_was_read(tmp_path, monkeypatch):
    path = three_turns(tmp_path / "nb.ipynb")
    other = three_turns(tmp_path / "other.ipynb")
    read_ahead(path)
    assert restore_ahead.take(other) is None


def test_a_missing_file_reads_nothing_and_the_restore_says_so(tmp_path, monkeypatch):
    path = tmp_path / "gone.ipynb"
    read_ahead(path)
    assert restore_ahead.take(path) is None
    line = restore_into(Session(None, provider_name="test"), {}, {"ELELEM_NOTEBOOK": str(path)})
    assert line is not None and "gone.ipynb not found" in line


def test_no_notebook_known_reads_nothing():
    read_ahead(None)
    assert restore_ahead._read is None


def test_a_find_that_fails_reads_nothing():
    def broken() -> Path:
        raise OSError("no such session")

    thread = restore_ahead.start(broken)
    assert thread is not None
    thread.join(10)
    assert restore_ahead._read is None


def test_the_read_starts_once_per_process(tmp_path, monkeypatch):
    path = three_turns(tmp_path / "nb.ipynb")
    read_ahead(path)
    assert restore_ahead.start(lambda: path) is None


def test_cells_sent_by_the_page_drop_what_was_read(tmp_path):
    path = three_turns(tmp_path / "nb.ipynb")
    read_ahead(path)
    session = Session(None, provider_name="test")
    frontend = {"path": str(path), "cells": [], "warnings": []}
    restore_into(session, {FRONTEND_KEY: frontend}, {"ELELEM_NOTEBOOK": str(path)})
    assert restore_ahead._read is None  # not held for the kernel's life


def test_a_read_that_ends_after_the_page_sent_its_cells_is_not_kept(tmp_path):
    path = three_turns(tmp_path / "nb.ipynb")
    gate = threading.Event()

    def slow() -> Path:
        gate.wait(10)
        return path

    thread = restore_ahead.start(slow)
    assert thread is not None
    restore_ahead.drop()
    gate.set()
    thread.join(10)
    assert restore_ahead._read is None


def test_a_notebook_over_the_limit_is_left_to_the_first_restore(tmp_path, monkeypatch):
    path = three_turns(tmp_path / "nb.ipynb")
    monkeypatch.setattr(restore_ahead, "LIMIT", path.stat().st_size - 1)
    read_ahead(path)
    assert restore_ahead._read is None
    line = restore_into(Session(None, provider_name="test"), {}, {"ELELEM_NOTEBOOK": str(path)})
    assert line is not None and line.startswith("restored 3 turns")
