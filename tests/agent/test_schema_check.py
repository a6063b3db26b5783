"""`fits` answers True only where jsonschema accepts: checked against jsonschema itself."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import jsonschema
import pytest

from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.schema_check import fits

RECORD_SCHEMA = json.loads(
    resources.files("elelem_kernel.store").joinpath("record.schema.json").read_text("utf-8")
)
GOOD_RECORD = {
    "v": 1,
    "conversation": "c1",
    "turn": "t1",
    "cell": None,
    "provider": "demo",
    "model": None,
    "prompt": "hi",
    "reply": "hello",
    "rounds": [{"text": "x", "calls": [{"id": "a", "name": "read", "arguments": {}, "ok": True}]}],
    "usage": {"input": 3, "output": None},
    "stop": "end_turn",
    "ms": 12.5,
    "cost": None,
    "unknown_key": {"kept": True},
}
SCHEMAS = [
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]},
    {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 4},
    {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    {"enum": ["a", "b", 1]},
    {"type": "array", "items": {"type": ["number", "null"], "maximum": 5}},
    {"const": 1},
    {"type": "object", "additionalProperties": False},  # not in the allowlist
    {"type": "string", "format": "email"},  # nor this
]
VALUES = [
    {"n": 1},
    {"n": 0},
    {"n": True},
    {"n": 1.0},
    {},
    "ab",
    "abcde",
    "A1",
    "a",
    1,
    True,
    1.0,
    None,
    [1, None, 5],
    [6],
    [True],
    "b",
    {"x": 1},
    "not an email",
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_a_yes_is_always_a_yes_of_jsonschema(schema):
    validator = jsonschema.Draft202012Validator(schema)
    for value in VALUES:
        if fits(schema, value):
            assert validator.is_valid(value), (schema, value)


def test_plain_values_fit_without_asking_jsonschema():
    assert fits(SCHEMAS[0], {"n": 3})
    assert fits(SCHEMAS[1], "abc")
    assert fits(SCHEMAS[4], [1, None, 5])
    assert not fits(SCHEMAS[0], {"n": 0})
    assert not fits(SCHEMAS[6], {})  # unknown keyword: jsonschema decides


def test_records_fit_the_record_schema_and_broken_ones_do_not():
    assert jsonschema.Draft202012Validator(RECORD_SCHEMA).is_valid(GOOD_RECORD)
    assert fits(RECORD_SCHEMA, GOOD_RECORD)
    for key, bad in (("turn", ""), ("v", 2), ("ms", -1), ("rounds", [{"calls": [{}]}])):
        assert not fits(RECORD_SCHEMA, {**GOOD_RECORD, key: bad}), key


def test_the_workspace_tools_schemas_take_typical_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    box = new_session(provider="echo", workspace=tmp_path).toolbox
    typical = {"read": {"path": "README.md", "offset": 1, "limit": 20}, "list": {"path": "."}}
    for name, args in typical.items():
        tool = box.get(name)
        assert tool is not None, name
        assert fits(tool.schema, args), name


def test_a_valid_tool_call_and_a_restore_do_not_import_jsonschema(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    code = f"""
import sys
from elelem_kernel.store.rebuild import check
from elelem_kernel.assembly.sessions import new_session
from elelem_kernel.agent.toolbox import validation_error
box = new_session(provider="echo", workspace={str(tmp_path)!r}).toolbox
box.specs()  # offering the tools starts no import either
assert validation_error(box.get("read").schema, {{"path": "a"}}) is None
assert check({GOOD_RECORD!r}) is None
assert "jsonschema" not in sys.modules
assert validation_error(box.get("read").schema, {{"offset": 0}})  # the full check
assert "jsonschema" in sys.modules
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_compiled_checker_follows_recursive_references():
    from elelem_kernel.schema_check import checker

    tree = {
        "$defs": {
            "node": {"type": "object", "properties": {"kids": {"items": {"$ref": "#/$defs/node"}}}}
        },
        "$ref": "#/$defs/node",
    }
    check = checker(tree)
    assert check({"kids": [{"kids": []}, {}]})
    assert not check({"kids": [{"kids": [1]}]})
    assert jsonschema.Draft202012Validator(tree).is_valid({"kids": [{"kids": []}, {}]})
