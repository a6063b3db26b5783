"""Toolsets compose over a toolbox's own tools without changing them, and one `Tool`
dataclass serves every source."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
from pathlib import Path

import pytest

import elelem_kernel
from elelem_kernel.acp.editor_files import ClientFiles
from elelem_kernel.acp.editor_terminal import ClientTerminal
from elelem_kernel.agent import toolbox as toolbox_module
from elelem_kernel.agent.toolbox import Call, Toolbox
from elelem_kernel.agent.toolset import Rerouted, Tools
from elelem_kernel.mcp.attachment import McpTools
from elelem_kernel.tools.declaration import Tool

PACKAGE = Path(elelem_kernel.__file__).parent


def disk_read(args):
    return {"from": "disk", "path": args["path"]}


def box_with_read() -> tuple[Toolbox, Tool]:
    box = Toolbox()
    read = Tool("read", "Read a file", {"path": {"type": "string"}}, disk_read, ("path",))
    box.put(read)
    return box, read


def run(box: Toolbox, name: str, **arguments):
    call = Call("c1", name, arguments)
    assert box.resolve(call) is None
    return asyncio.run(box.run(call))


def editor(fn):
    def read(args):
        return {"from": "editor", "fallback": fn(args)["from"]}

    return read


def test_a_reroute_runs_the_tool_another_way_and_leaves_the_original_as_it_was():
    box, read = box_with_read()
    layer = box.add_toolset(Rerouted("editor", {"read": editor, "absent": editor}))
    rerouted = box.get("read")
    assert rerouted is not read and rerouted.fn is not disk_read
    assert read.fn is disk_read  # the tool below is not patched
    assert run(box, "read", path="a.py") == {"ok": True, "from": "editor", "fallback": "disk"}
    assert box.get("absent") is None  # a reroute of a tool that is not there adds none
    box.remove_toolset(layer)
    assert box.get("read") is read
    assert run(box, "read", path="a.py")["from"] == "disk"


def test_a_rerouted_tool_is_the_same_object_until_the_tool_below_changes():
    box, read = box_with_read()
    box.add_toolset(Rerouted("editor", {"read": editor}))
    first = box.get("read")
    assert box.get("read") is first and first in box.offered()
    other = dataclasses.replace(read, description="Read a file, again")
    box.put(other)
    assert box.get("read") is not first and box.get("read").description == "Read a file, again"


def test_a_source_of_tools_replaces_one_of_its_name_until_it_is_taken_away():
    box, read = box_with_read()
    box.put(Tool("list", "List files", {}, lambda a: {}))
    own = Tool("read", "Read it my way", {}, lambda a: {"mine": True}, aliases=("cat",))
    layer = box.add_toolset(Tools("plugin", [own, Tool("extra", "More", {}, lambda a: {})]))
    assert list(box.tools) == ["list", "read", "extra"]  # a replaced name moves last, as put
    assert box.get("read") is own and box.get("cat") is own and box.aliases == {"cat": "read"}
    box.remove_toolset(layer)
    assert box.tools == {"read": read, "list": box.get("list")} and box.get("cat") is None
    assert Toolbox(toolsets=[Tools("plugin", [own])]).get("cat") is own  # composed from the start


def test_a_tool_is_frozen_so_no_source_can_patch_another_ones():
    _box, read = box_with_read()
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.fn = editor(disk_read)  # type: ignore[misc]


def test_the_editors_files_and_terminal_are_toolsets_over_the_disk_tools():
    box, read = box_with_read()
    write = Tool("write", "Write", {}, lambda a: {}, kind="write")
    bash_fn = lambda a: {}  # noqa: E731
    bash = Tool("bash", "Run", {}, bash_fn, kind="execute")
    for tool in (write, bash):
        box.put(tool)
    files = ClientFiles(object(), "s1", Path.cwd, read=True, write=False)
    box.add_toolset(files.toolset())
    box.add_toolset(ClientTerminal(object(), "s1", Path.cwd, lambda: None).toolset())
    assert box.get("read") is not read and box.get("read").fn.__qualname__.startswith(
        "ClientFiles._read"
    )
    assert box.get("write") is write  # the client cannot write: the disk tool stays
    assert box.get("bash").fn.__qualname__.startswith("ClientTerminal._bash")
    assert read.fn is disk_read and bash.fn is bash_fn  # the disk tools are not patched


def test_the_mcp_toolset_offers_its_tools_over_the_others_without_touching_them(tmp_path):
    box, read = box_with_read()
    mcp = McpTools(lambda: tmp_path)
    box.add_toolset(mcp)
    assert box.tools == {"read": read}
    mcp.tools = {"mcp__s__t": Tool("mcp__s__t", "Remote", {}, lambda a: {}, kind="execute")}
    assert list(box.tools) == ["read", "mcp__s__t"]
    mcp.install()  # no hub: no server runs, so it offers none
    assert box.tools == {"read": read}


def _dataclass_fields() -> dict[str, set[str]]:
    """Every dataclass of the package, by `module:Class`, and the fields it declares."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and any(
                "dataclass" in ast.unparse(d) for d in node.decorator_list
            ):
                fields = {
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                }
                found[f"{path.relative_to(PACKAGE)}:{node.name}"] = fields
    return found


def test_one_dataclass_declares_a_tool():
    shape = {"name", "description", "params", "fn", "kind", "preview", "prepare"}
    declaring = [name for name, fields in _dataclass_fields().items() if shape <= fields]
    assert declaring == ["tools/declaration.py:Tool"]
    assert toolbox_module.Tool is Tool and elelem_kernel.Tool is Tool
