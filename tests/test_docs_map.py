"""One description of the layout: the module map in docs/internals.md, checked both ways
against the package and layer by layer against `LAYERS`; and docs that cite nothing outside
the repository."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.test_layers import LAYERS, PACKAGE, modules_in

REPO = PACKAGE.parent
INTERNALS = REPO / "docs" / "internals.md"
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|(.*)\|\s*$")
DIAGRAM_NAME = re.compile(r"^\w+(/|\.py)$")


@dataclass
class ModuleMap:
    """What the map says: its layers (heading, then the module paths of its table, as
    written: `agent/session.py`, `agent/` for a package) and its diagram's rows of names."""

    layers: list[tuple[str, list[str]]]
    undescribed: list[str]
    diagram: list[list[str]]


def read_map(text: str) -> ModuleMap:
    """The `## Module map` section of internals.md, parsed."""
    _, found, rest = text.partition("\n## Module map\n")
    section = rest.split("\n## ", 1)[0] if found else ""
    layers: list[tuple[str, list[str]]] = []
    undescribed, diagram, in_code = [], [], False
    for line in section.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif in_code:
            names = []
            for word in line.split():
                if not DIAGRAM_NAME.match(word):
                    break
                names.append(word)
            if names:
                diagram.append(names)
        elif line.startswith("### "):
            layers.append((line[4:].strip(), []))
        elif (row := ROW.match(line)) and layers:
            layers[-1][1].append(row[1])
            if not row[2].strip():
                undescribed.append(row[1])
    return ModuleMap(layers, undescribed, diagram)


def top_name(path: str) -> str:
    """The LAYERS name a map path belongs to: `agent/x.py` -> agent, `cli.py` -> cli."""
    first = path.split("/")[0]
    return first.removesuffix(".py")


def map_path(module: Path, package: Path) -> str:
    """How the map writes a module of the package: `agent/session.py`, `agent/` for a
    package's `__init__.py`, `__init__.py` for the package's own."""
    relative = module.relative_to(package)
    if relative.name == "__init__.py" and relative.parent != Path("."):
        return f"{relative.parent.as_posix()}/"
    return relative.as_posix()


def map_problems(package: Path, text: str, layers: list[tuple[str, ...]]) -> list[str]:
    """Every way the map and the package (and LAYERS) disagree, one line each, saying
    which module and what to do."""
    where = "docs/internals.md's module map"
    found = read_map(text)
    if not found.layers:
        return [f"{where} is missing: a `## Module map` section with a `###` table per layer"]
    named = [path for _, paths in found.layers for path in paths]
    real = {map_path(p, package) for p in modules_in(package).values()}
    problems = [
        f"{where} names `{p}` more than once" for p in sorted(set(named)) if named.count(p) > 1
    ]
    problems += [
        f"{where} names `{p}`, which is not in {package.name}/: fix the name or drop its row"
        for p in sorted(set(named) - real)
    ]
    problems += [
        f"{package.name}/{p} is not in {where}: add `| `{p}` | what it is |` under its layer"
        for p in sorted(real - set(named))
    ]
    problems += [f"{where}: `{p}` has no description" for p in found.undescribed]
    tables = [[top_name(p) for p in paths] for _, paths in found.layers]
    problems += layer_differences(f"the tables of {where}", tables, layers)
    drawn = [[top_name(name) for name in row] for row in found.diagram]
    problems += layer_differences(f"the diagram of {where}", drawn, layers)
    return problems


def layer_differences(
    what: str, found: list[list[str]], layers: list[tuple[str, ...]]
) -> list[str]:
    """Where the layers `found` in the map and `LAYERS` place a name differently."""
    at = {name: i + 1 for i, layer in enumerate(found) for name in layer}
    declared = {name: i + 1 for i, layer in enumerate(layers) for name in layer}
    problems = []
    for name in sorted(at.keys() | declared.keys()):
        if name not in declared:
            problems.append(f"`{name}` is in layer {at[name]} of {what}, in none of LAYERS")
        elif name not in at:
            problems.append(f"`{name}` (layer {declared[name]} of LAYERS) is in no layer of {what}")
        elif at[name] != declared[name]:
            problems.append(
                f"`{name}` is in layer {at[name]} of {what}, layer {declared[name]} of LAYERS"
            )
    return problems


def test_the_module_map_in_the_docs_names_every_module_once_in_its_layer():
    problems = map_problems(PACKAGE, INTERNALS.read_text(), LAYERS)
    assert problems == [], "\n".join(problems)


MAP = """# x

## Module map

```
 cli.py  acp/
     │  fronts
     ▼
 agent/
 errors.py
        leaves: any layer
```

### Fronts
| module | what it is |
|---|---|
| `cli.py` | the command |
| `acp/` | the ACP package |
| `acp/gone.py` | not there any more |

### agent
| module | what it is |
|---|---|
| `agent/` | the package |
| `agent/session.py` |  |
| `agent/session.py` | again |
| `errors.py` | a leaf in the wrong layer |

## Next section
| `agent/turn.py` | a row outside the map does not count |
"""


def test_the_map_check_says_which_module_is_missing_absent_twice_or_misplaced(tmp_path):
    pkg = tmp_path / "elelem_kernel"
    for name in ("__init__.py", "cli.py", "errors.py", "acp/__init__.py", "agent/__init__.py"):
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text("")
    for name in ("agent/session.py", "agent/turn.py"):
        (pkg / name).write_text("")
    layers = [("acp", "cli"), ("agent",), ("errors",)]
    where = "docs/internals.md's module map"
    assert map_problems(pkg, MAP, layers) == [
        f"{where} names `agent/session.py` more than once",
        f"{where} names `acp/gone.py`, which is not in elelem_kernel/: fix the name or drop its row",
        f"elelem_kernel/__init__.py is not in {where}: add `| `__init__.py` | what it is |` "
        "under its layer",
        f"elelem_kernel/agent/turn.py is not in {where}: add `| `agent/turn.py` | what it is |` "
        "under its layer",
        f"{where}: `agent/session.py` has no description",
        f"`errors` is in layer 2 of the tables of {where}, layer 3 of LAYERS",
    ]
    assert map_problems(pkg, "# no map here\n", layers) == [
        f"{where} is missing: a `## Module map` section with a `###` table per layer"
    ]


def test_a_layer_drawn_elsewhere_missing_or_undeclared_is_named():
    layers = [("acp", "cli"), ("agent",), ("errors",)]
    assert layer_differences("the diagram", [["cli", "gadgets"], ["errors"]], layers) == [
        "`acp` (layer 1 of LAYERS) is in no layer of the diagram",
        "`agent` (layer 2 of LAYERS) is in no layer of the diagram",
        "`errors` is in layer 2 of the diagram, layer 3 of LAYERS",
        "`gadgets` is in layer 1 of the diagram, in none of LAYERS",
    ]


def development_section(readme: str) -> str:
    return readme.split("\n## Development\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_development_section_points_to_the_map_instead_of_repeating_it():
    section = development_section((REPO / "README.md").read_text())
    assert "(docs/internals.md#module-map)" in section
    assert "(docs/design.md)" in section
    listed = [line for line in section.splitlines() if re.match(r"^\s+\w+/\s{2,}", line)]
    assert listed == [], "the README repeats the module map; point to it instead"


LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors for a Markdown file's headings."""
    found = set()
    for heading in HEADING.findall(markdown):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def broken_links(repo: Path, files: list[Path]) -> list[str]:
    """Relative links in `files` that lead nowhere or out of the repository."""
    problems = []
    for doc in files:
        for target in LINK.findall(CODE.sub("", doc.read_text())):
            if re.match(r"^[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            goal = (doc.parent / path).resolve() if path else doc
            name = f"{doc.relative_to(repo)}: ({target})"
            if not goal.is_relative_to(repo.resolve()):
                problems.append(f"{name} leads out of the repository")
            elif not goal.exists():
                problems.append(f"{name} leads to nothing")
            elif anchor and goal.suffix == ".md" and anchor not in anchors(goal.read_text()):
                problems.append(f"{name} names no heading of {goal.name}")
    return problems


def test_the_docs_link_only_to_what_is_in_the_repository():
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    problems = broken_links(REPO, docs)
    assert problems == [], "\n".join(problems)


def test_the_link_check_finds_links_out_of_the_repository_to_nothing_or_no_heading(tmp_path):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "design.md").write_text("# Design\n\n## The layers\n")
    readme = repo / "README.md"
    readme.write_text(
        "[ok](docs/design.md#the-layers) [web](https://example.org/x) [here](#top)\n"
        "[out](../shared/DESIGN.md) [none](docs/gone.md) [heading](docs/design.md#layers)\n"
        "`[code](../not/a/link)`\n```\n[block](nor/this)\n```\n# Top\n"
    )
    assert broken_links(repo, [readme]) == [
        "README.md: (../shared/DESIGN.md) leads out of the repository",
        "README.md: (docs/gone.md) leads to nothing",
        "README.md: (docs/design.md#layers) names no heading of design.md",
    ]
