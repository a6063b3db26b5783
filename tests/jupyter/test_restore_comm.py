from __future__ import annotations

from elelem_kernel.jupyter.restore import FRONTEND_KEY, NOTEBOOK_KEY, find_notebook
from elelem_kernel.jupyter.restore_comm import notebook_path, receive


def test_the_notebook_path_joins_the_server_root_and_the_relative_path(tmp_path):
    assert notebook_path("sub/nb.ipynb", str(tmp_path)) == str(tmp_path / "sub" / "nb.ipynb")
    assert notebook_path("nb.ipynb", "") is None
    assert notebook_path("", str(tmp_path)) is None
    assert notebook_path("../../etc/nb.ipynb", str(tmp_path)) is None
    assert notebook_path("nb.ipynb", "relative/root") is None


def test_what_the_frontend_sent_names_the_notebook_after_load_and_env(tmp_path):
    user_ns: dict = {}
    cells = [{"id": "a", "outputs": [{"metadata": {"elelem": {"v": 1}}}]}, {"id": "b"}]
    data = {"path": "nb.ipynb", "root": str(tmp_path), "notebook": {"cells": cells}}
    assert receive(user_ns, data) == 2
    assert user_ns[FRONTEND_KEY]["name"] == "nb.ipynb"
    assert [c.id for c in user_ns[FRONTEND_KEY]["cells"]] == ["a", "b"]
    assert find_notebook(user_ns, {"JPY_SESSION_NAME": "/x/y.ipynb"}) == (
        tmp_path / "nb.ipynb",
        "from the frontend",
    )
    assert find_notebook(user_ns, {"ELELEM_NOTEBOOK": "/e.ipynb"})[1] == "from ELELEM_NOTEBOOK"
    user_ns[NOTEBOOK_KEY] = "/l.ipynb"
    assert find_notebook(user_ns, {})[1] == "from /load"


def test_a_message_that_is_not_a_dict_keeps_nothing_to_restore():
    user_ns: dict = {}
    assert receive(user_ns, ["not", "a", "dict"]) == 0
    assert user_ns[FRONTEND_KEY]["path"] is None
    assert user_ns[FRONTEND_KEY]["warnings"]
