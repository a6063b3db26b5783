"""One description of the layout: the module map in docs/internals.md, checked both ways
against the package, layer by layer against `LAYERS` and line by line against the modules'
docstrings; and docs that cite nothing outside the repository."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
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
    descriptions: dict[str, str] = field(default_factory=dict)


def read_map(text: str) -> ModuleMap:
    """The `## Module map` section of internals.md, parsed."""
    _, found, rest = text.partition("\n## Module map\n")
    section = rest.split("\n## ", 1)[0] if found else ""
    layers: list[tuple[str, list[str]]] = []
    undescribed, diagram, in_code = [], [], False
    descriptions: dict[str, str] = {}
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
            descriptions.setdefault(row[1], row[2].strip().replace("\\|", "|"))
            if not row[2].strip():
                undescribed.append(row[1])
    return ModuleMap(layers, undescribed, diagram, descriptions)


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


SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z`(\"'@%_$]|\s*$)")


def summary(docstring: str) -> str:
    """A docstring's one-line description: the first sentence of its first paragraph, on
    one line, without its full stop."""
    paragraph = " ".join(docstring.strip().split("\n\n", 1)[0].split())
    end = SENTENCE_END.search(paragraph)
    return paragraph[: end.start()] if end else paragraph


def same_words(description: str, sentence: str) -> bool:
    """Whether the map's description is the docstring's sentence (the map starts it in lower
    case and drops the full stop)."""
    first = description.strip().rstrip(".")
    return first[:1].lower() == sentence[:1].lower() and first[1:] == sentence[1:]


def description_problems(package: Path, text: str) -> list[str]:
    """Each row of the map whose description is not its module's one-line description, the
    first sentence of its docstring, with both sides, so either can be fixed."""
    problems = []
    for path, description in read_map(text).descriptions.items():
        module = package / path / "__init__.py" if path.endswith("/") else package / path
        if not module.is_file() or not description:
            continue  # map_problems says so
        docstring = ast.get_docstring(ast.parse(module.read_text(), str(module)))
        if not docstring:
            problems.append(f"{package.name}/{path} has no docstring; the map says: {description}")
        elif not same_words(description, sentence := summary(docstring)):
            problems.append(
                f"`{path}`: the map says {description!r}; its docstring's first sentence says"
                f" {sentence!r}: make them the same words"
            )
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


def test_each_module_s_line_in_the_map_is_the_first_sentence_of_its_docstring():
    problems = description_problems(PACKAGE, INTERNALS.read_text())
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


DESCRIBED = """# x

## Module map

### agent
| module | what it is |
|---|---|
| `agent/` | the agent: sessions and their turn loop |
| `agent/session.py` | the session: one conversation with one model |
| `agent/turn.py` | the turn loop, which runs rounds |
| `agent/bare.py` | a module without a docstring |
| `agent/pipe.py` | a \\| b, the pipe escaped in the table |
| `agent/gone.py` | map_problems names a row without a module |
"""


def test_the_description_check_names_each_row_that_is_not_its_docstring_s_first_sentence(
    tmp_path,
):
    pkg = tmp_path / "elelem_kernel"
    (pkg / "agent").mkdir(parents=True)
    modules = {
        "__init__.py": '"""The agent: sessions and their turn loop.\n\nMore, e.g. this."""\n',
        "session.py": '"""The session: one conversation\nwith one model. And more."""\n',
        "turn.py": '"""The turn loop: rounds of model and tool calls."""\n',
        "bare.py": "X = 1\n",
        "pipe.py": '"""A | b, the pipe escaped in the table."""\n',
    }
    for name, source in modules.items():
        (pkg / "agent" / name).write_text(source)
    assert description_problems(pkg, DESCRIBED) == [
        "`agent/turn.py`: the map says 'the turn loop, which runs rounds'; its docstring's"
        " first sentence says 'The turn loop: rounds of model and tool calls': make them the"
        " same words",
        "elelem_kernel/agent/bare.py has no docstring; the map says: a module without a docstring",
    ]


def test_a_docstring_s_one_line_description_is_its_first_sentence_on_one_line():
    assert summary("Undo: revert a turn.\n\nMore.") == "Undo: revert a turn"
    assert summary("Runs `python -m x.y` over\n    two lines. Then more.") == (
        "Runs `python -m x.y` over two lines"
    )
    assert summary("Slash commands: `/help`, ... as a registry; e.g. this one") == (
        "Slash commands: `/help`, ... as a registry; e.g. this one"
    )
    assert same_words("the session: one model", "The session: one model")
    assert not same_words("the session: two models", "The session: one model")


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
