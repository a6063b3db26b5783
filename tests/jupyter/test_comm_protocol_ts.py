"""labextension/src/protocol.ts agrees with the comms' JSON Schemas.

Every part of a schema with a `title` is a type of that name in protocol.ts. Then the
TypeScript compiler is the judge, twice: each schema example, written as a TypeScript
value of its type (and of its part's type), compiles; and each example with a required
field left out, or a field the schema does not know added, fails to compile on its own
line, as the schema refuses it too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.comm_schemas import PARTS, TARGETS, errors, members, schema, validator

REPO = Path(__file__).resolve().parents[2]
PROTOCOL = REPO / "labextension" / "src" / "protocol.ts"
TSC = REPO / "labextension" / "node_modules" / "typescript" / "bin" / "tsc"
UNKNOWN = "not_in_the_schema"

# tsc with node_modules: `npm ci` in labextension/ (scripts/setup.sh and CI do it)
needs_tsc = pytest.mark.skipif(
    not (TSC.is_file() and shutil.which("node")) and not os.environ.get("CI"),
    reason="needs node and labextension/node_modules: cd labextension && npm ci",
)


def titled() -> list[tuple[str, str, dict[str, Any]]]:
    """(target, name under $defs, definition) of every part of every schema with a title."""
    return [
        (target, name, definition)
        for target in TARGETS
        for name, definition in schema(target)["$defs"].items()
        if "title" in definition
    ]


def test_every_titled_part_of_a_schema_is_a_type_in_protocol_ts():
    text = PROTOCOL.read_text()
    exported = set(re.findall(r"^export (?:interface|type) (\w+)\b", text, re.M))
    missing = [d["title"] for _, _, d in titled() if d["title"] not in exported]
    assert not missing, f"protocol.ts has no type for {missing}"
    assert "any" not in re.findall(r"\b(any)\b", re.sub(r"/\*.*?\*/|//.*", "", text, flags=re.S))


def literal(value: Any) -> str:
    """`value` as a TypeScript expression on one line."""
    return json.dumps(value, ensure_ascii=False)


def agreeing() -> list[str]:
    """Declarations that must compile: every example as its type, and as its part's."""
    lines = []
    for target in TARGETS:
        defs = schema(target)["$defs"]
        for definition in defs.values():
            for example in definition.get("examples", []):
                lines.append(f"{definition['title']} = {literal(example)}")
        for part in (p for p in PARTS if p in defs):
            for name in members(target, part):
                for example in defs[name].get("examples", []):
                    lines.append(f"{defs[part]['title']} = {literal(example)}")
    return lines


def refused() -> list[str]:
    """Declarations that must not compile: each example of a part with required fields
    without one of them, and with a field the schema does not know; the schema refuses
    each too."""
    lines = []
    for target, name, definition in titled():
        for example in definition.get("examples", [])[:1]:
            if not isinstance(example, dict):
                continue
            variants = [
                {k: v for k, v in example.items() if k != key}
                for key in definition.get("required", [])
            ]
            closed = definition.get("additionalProperties", definition.get("unevaluatedProperties"))
            if closed is False:
                variants.append({**example, UNKNOWN: 1})
            for variant in variants:
                check = validator(target, f"#/$defs/{name}")
                assert not check.is_valid(variant), f"{target} {name} takes {variant}"
                lines.append(f"{definition['title']} = {literal(variant)}")
    return lines


def compile_declarations(tmp_path: Path, declarations: list[str]) -> dict[int, str]:
    """Compile one `const` per declaration against protocol.ts; tsc's errors by line."""
    import_line = f"import * as P from {json.dumps(str(PROTOCOL.with_suffix('')))};"
    body = [f"export const v{i}: P.{d};" for i, d in enumerate(declarations)]
    source = tmp_path / "check.ts"
    source.write_text("\n".join([import_line, *body]) + "\n")
    argv = ["node", str(TSC), "--noEmit", "--pretty", "false", "--strict", "--skipLibCheck"]
    argv += ["--target", "ES2019", "--module", "esnext", "--moduleResolution", "node"]
    argv += ["--lib", "DOM,ES2019", "--esModuleInterop", str(source)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    found: dict[int, str] = {}
    for line in done.stdout.splitlines():
        if line.startswith(" "):
            continue  # the details of the error above
        match = re.match(r"(.+?)\((\d+),\d+\): error (.*)", line)
        assert match, f"tsc said: {line}"
        assert Path(match[1]).name == "check.ts", f"tsc failed on {line}"
        found.setdefault(int(match[2]) - 2, match[3])  # line 1 is the import
    return found


@needs_tsc
def test_every_schema_example_is_a_value_of_its_typescript_type(tmp_path):
    declarations = agreeing()
    assert len(declarations) > 40
    failed = compile_declarations(tmp_path, declarations)
    assert not failed, "\n".join(f"{declarations[i]}\n  {why}" for i, why in failed.items())


@needs_tsc
def test_what_a_schema_refuses_its_typescript_type_refuses(tmp_path):
    declarations = refused()
    assert len(declarations) > 40
    failed = compile_declarations(tmp_path, declarations)
    passed = [d for i, d in enumerate(declarations) if i not in failed]
    assert not passed, "these compile, but the schema refuses them:\n" + "\n".join(passed)


def test_a_refused_declaration_is_refused_by_the_schema():
    notebook = schema("elelem.notebook")["$defs"]
    assert errors("elelem.notebook", "from_frontend", {"id": 1})
    assert not errors("elelem.notebook", "from_frontend", notebook["Ack"]["examples"][0])
