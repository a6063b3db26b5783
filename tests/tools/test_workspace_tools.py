"""add_workspace_tools: names, aliases, kinds, schemas, and calls through a real Toolbox."""

from __future__ import annotations

import asyncio
from pathlib import Path

import jsonschema
import nbformat

from elelem_kernel.agent.toolbox import Call, Toolbox
from elelem_kernel.assembly.workspace_tools import add_workspace_tools
from tests.tools.conftest import StandInSession

EXPECTED = {
    "read": ("read", ("open",)),
    "list": ("read", ("ls", "glob")),
    "grep": ("read", ("search",)),
    "write": ("write", ()),
    "edit": ("write", ()),
    "bash": ("execute", ("exec", "shell")),
    "python": ("execute", ()),
    "variables": ("read", ()),
    "notebook_read": ("read", ()),
    "notebook_edit": ("write", ()),
    "notebook_run": ("execute", ()),
    "propose_cell": ("read", ()),
}


def session_in(root: Path, **kw: object) -> StandInSession:
    session = StandInSession(root, **kw)  # type: ignore[arg-type]
    add_workspace_tools(session.toolbox, session.tool_context)
    return session


def call(toolbox: Toolbox, name: str, mode: str = "auto", **arguments: object) -> dict:
    c = Call(id="c1", name=name, arguments=dict(arguments))
    problem = toolbox.resolve(c, mode)
    if problem:
        return {"ok": False, "error": problem}
    return asyncio.run(toolbox.run(c))


def test_every_tool_is_registered_with_its_kind_aliases_and_a_valid_schema(root: Path) -> None:
    toolbox = session_in(root).toolbox
    assert list(toolbox.tools) == list(EXPECTED)
    for name, (kind, aliases) in EXPECTED.items():
        tool = toolbox.tools[name]
        assert (tool.kind, tool.aliases) == (kind, aliases), name
        jsonschema.Draft202012Validator.check_schema(tool.schema)
        assert tool.description and all(r in tool.params for r in tool.required)
        for alias in aliases:
            assert toolbox.get(alias) is tool
        if kind != "read":
            assert tool.preview is not None, f"{name} needs a preview for approval"


def test_modes_offer_the_right_kinds(root: Path) -> None:
    toolbox = session_in(root).toolbox
    plan = {t.name for t in toolbox.offered("plan")}
    assert plan == {n for n, (k, _) in EXPECTED.items() if k == "read"}
    assert "bash" not in {t.name for t in toolbox.offered("build")}
    assert "write" not in {t.name for t in toolbox.offered("verify")}


def test_calls_through_the_toolbox(root: Path) -> None:
    session = session_in(root)
    tb = session.toolbox
    assert call(tb, "write", path="notes/a.txt", content="hello\n")["action"] == "created"
    assert call(tb, "open", path="notes/a.txt")["content"] == "     1\thello"
    assert call(tb, "ls")["files"] == ["notes/a.txt"]
    assert call(tb, "search", pattern="hel+o")["matches"] == "notes/a.txt:1:hello"
    assert call(tb, "edit", path="notes/a.txt", old="hello", new="bye")["ok"]
    assert call(tb, "shell", command="cat notes/a.txt")["stdout"] == "bye\n"
    assert call(tb, "python", code="answer = 6 * 7\nanswer")["value"] == "42"
    assert session.tool_context.namespace["answer"] == 42
    assert call(tb, "variables")["variables"][0]["name"] == "answer"
    assert call(tb, "propose_cell", source="df.head()") == {
        "ok": True,
        "proposed": True,
        "note": "the person sees the cell and decides whether to run it",
    }
    assert session.proposed == ["df.head()"]


def test_an_escape_reaches_the_model_as_a_plain_failure(root: Path) -> None:
    got = call(session_in(root).toolbox, "read", path="../../etc/passwd")
    assert got["ok"] is False
    assert got["error"].startswith('"../../etc/passwd" is outside the workspace')
    assert got["arguments"] == {"path": "../../etc/passwd"}


def test_bad_arguments_are_caught_by_the_schema(root: Path) -> None:
    tb = session_in(root).toolbox
    assert "invalid arguments for read" in call(tb, "read", path="a", limit=99_999)["error"]
    assert (
        "invalid arguments for notebook_edit"
        in call(tb, "notebook_edit", path="a.ipynb", insert="middle")["error"]
    )


def test_the_open_notebook_is_protected_and_propose_cell_is_the_way(root: Path) -> None:
    path = root / "open.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), path)
    session = session_in(root, open_notebook=path)
    before = path.read_bytes()
    for name, args in (
        ("notebook_edit", {"path": "open.ipynb", "cell": 0, "source": "2"}),
        ("write", {"path": "open.ipynb", "content": "{}"}),
        ("edit", {"path": "open.ipynb", "old": '"1"', "new": '"2"'}),
    ):
        got = call(session.toolbox, name, **args)
        assert got["ok"] is False and "propose_cell" in got["error"], name
    assert path.read_bytes() == before
    assert (
        "open in the frontend" in call(session.toolbox, "notebook_read", path="open.ipynb")["note"]
    )
    session.tool_context.open_notebook = None
    assert call(session.toolbox, "notebook_edit", path="open.ipynb", cell=0, source="2")["ok"]


def test_propose_cell_without_a_frontend_fails_clearly(root: Path) -> None:
    session = session_in(root)
    session.tool_context.propose_cell = None
    got = call(session.toolbox, "propose_cell", source="x")
    assert got["ok"] is False and "no frontend" in got["error"]


def test_previews_show_what_will_happen(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    tools = session_in(root).toolbox.tools
    assert tools["bash"].describe({"command": "ls -la"}).startswith("$ ls -la\n(in ")
    assert tools["python"].describe({"code": "x = 1"}) == "x = 1"
    assert "-one\n+two\n" in tools["edit"].describe({"path": "a.txt", "old": "one", "new": "two"})
    assert "+new\n" in tools["write"].describe({"path": "b.txt", "content": "new\n"})
    assert tools["notebook_run"].describe({"path": "n.ipynb", "cells": [1]}) == (
        "run n.ipynb cells [1] in a new kernel (120 s per cell)"
    )
    assert "would fail" in tools["notebook_edit"].describe(
        {"path": "n.ipynb", "cell": 0, "delete": True}
    )


GIT_PATHS = [".git/config", ".GIT/config", "sub/.git/hooks/pre-commit", ".git", "gitlink/config"]


def test_write_edit_and_notebook_edit_refuse_anything_under_dot_git(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "sub" / ".git" / "hooks").mkdir(parents=True)
    (root / "gitlink").symlink_to(root / ".git")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", id="c1"))
    (root / ".git" / "n.ipynb").write_text(nbformat.writes(nb))
    toolbox = session_in(root).toolbox
    for path in GIT_PATHS:
        result = call(toolbox, "write", path=path, content="[core]\nfsmonitor = touch x\n")
        assert result["ok"] is False and ".git" in result["error"], (path, result)
    result = call(toolbox, "edit", path=".git/config", old="[core]", new="[core]\nx=1")
    assert result["ok"] is False and "inside a .git folder" in result["error"]
    result = call(toolbox, "notebook_edit", path=".git/n.ipynb", cell="c1", source="y = 2")
    assert result["ok"] is False and "inside a .git folder" in result["error"]
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert not (root / "sub" / ".git" / "hooks" / "pre-commit").exists()
    assert "y = 2" not in (root / ".git" / "n.ipynb").read_text()


def test_names_that_only_look_like_dot_git_can_be_written(root: Path) -> None:
    toolbox = session_in(root).toolbox
    for path in (".gitignore", ".github/workflows/ci.yml", "my.git/notes.txt", "x.git"):
        assert call(toolbox, "write", path=path, content="ok\n")["ok"], path


def test_the_preview_of_a_write_into_dot_git_says_it_would_fail(root: Path) -> None:
    (root / ".git").mkdir()
    tool = session_in(root).toolbox.get("write")
    preview = tool.describe({"path": ".git/config", "content": "[core]\n"})
    assert preview.startswith("write .git/config: would fail:") and "inside a .git" in preview
