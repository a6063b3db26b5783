"""Notebook JSON without nbformat: the same bytes nbformat writes, and what it reads back."""

from __future__ import annotations

import json

import nbformat
import pytest

from elelem_kernel.store import ipynb_json


def sample() -> dict:
    nb = ipynb_json.new_notebook()
    nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb["metadata"]["signature"] = "transient: dropped on write"
    cell = ipynb_json.new_code_cell("x = 1\nprint('ünï')\n", "cell-1")
    cell["metadata"]["trusted"] = True  # transient too
    cell["outputs"] = [
        {"name": "stdout", "output_type": "stream", "text": "a\nb\n"},
        ipynb_json.display_data(
            {"text/plain": "one\ntwo", "text/html": "<b>x</b>\n", "image/png": "iVBOR\n"},
            {"elelem": {"turn": "t1"}},
        ),
    ]
    markdown = {"cell_type": "markdown", "id": "md", "metadata": {}, "source": "# A\n\ntext"}
    markdown["attachments"] = {"a.svg": {"image/svg+xml": "<svg>\n</svg>"}}
    nb["cells"] = [cell, markdown]
    return nb


def test_dumps_writes_the_bytes_nbformat_writes(tmp_path):
    nb = sample()
    expected = nbformat.writes(nbformat.from_dict(json.loads(json.dumps(nb))))
    assert ipynb_json.dumps(nb) == expected
    ipynb_json.write(nb, tmp_path / "a.ipynb")
    nbformat.write(nbformat.from_dict(json.loads(json.dumps(nb))), tmp_path / "b.ipynb")
    assert (tmp_path / "a.ipynb").read_bytes() == (tmp_path / "b.ipynb").read_bytes()
    assert nb["metadata"]["signature"] and nb["cells"][0]["metadata"]["trusted"]  # untouched


def test_read_gives_the_notebook_and_refuses_what_is_not_one(tmp_path):
    path = tmp_path / "nb.ipynb"
    ipynb_json.write(sample(), path)
    read = ipynb_json.read(path)
    assert ipynb_json.source(read["cells"][0]) == "x = 1\nprint('ünï')\n"
    broken = json.loads(path.read_text())
    broken["cells"][0]["outputs"] = "not a list"
    path.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="not a valid notebook: cells/0/outputs"):
        ipynb_json.read(path)


def test_a_taken_cell_id_gets_a_new_one():
    nb = sample()
    nb["cells"].append(ipynb_json.new_code_cell("again", "cell-1"))
    ipynb_json.unique_ids(nb)
    ids = [c["id"] for c in nb["cells"]]
    assert ids[:2] == ["cell-1", "md"] and len(set(ids)) == 3
