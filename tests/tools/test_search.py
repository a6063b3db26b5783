"""grep: ripgrep and the pure-Python fallback give the same result."""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from elelem_kernel.errors import ToolError
from elelem_kernel.tools import search
from elelem_kernel.tools.children import Children
from elelem_kernel.tools.file_tools import decode_line, iter_lines
from elelem_kernel.tools.search import _Matches, _search_rg, grep, split_lines
from elelem_kernel.tools.workspace import Workspace
from tests.git import git

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


@pytest.fixture
def tree(root: Path) -> Path:
    files = {
        "a.py": "import os\ndef Foo():\n    return 'foo'\n",
        "src/b.py": "FOO = 1\nbar = FOO + 1\n",
        "src/c.txt": "nothing here\nfoo at the end foo\n",
        "notes.md": "# Foo\r\nwindows line\r\n",
        "latin.txt": "caf\xe9 foo\n".encode("latin-1"),
        "blob.bin": b"foo\0binary",
        "src/deep/d.py": "x = 'foo'\n" * 3,
    }
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            (root / name).write_bytes(body)
        else:
            (root / name).write_bytes(body.encode())
    return root


CASES = [
    {"pattern": "foo"},
    {"pattern": "foo", "ignore_case": True},
    {"pattern": r"^\s+return", "path": "."},
    {"pattern": "FOO", "path": "src"},
    {"pattern": "foo", "glob": "*.py"},
    {"pattern": "foo", "path": "src", "glob": "deep/*.py"},
    {"pattern": "line$"},
    {"pattern": "no match at all"},
]


@needs_rg
@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c))
def test_rg_and_python_give_the_same_result(ws: Workspace, tree: Path, case: dict) -> None:
    assert grep(ws, engine="rg", **case) == grep(ws, engine="python", **case)


def test_output_format_order_and_counts(ws: Workspace, tree: Path) -> None:
    got = grep(ws, "foo", engine="python")
    assert got["matches"].splitlines() == [
        "a.py:3:    return 'foo'",
        "latin.txt:1:caf\ufffd foo",
        "src/c.txt:2:foo at the end foo",
        "src/deep/d.py:1:x = 'foo'",
        "src/deep/d.py:2:x = 'foo'",
        "src/deep/d.py:3:x = 'foo'",
    ]
    assert got["count"] == 6 and got["files"] == 4
    assert "blob.bin" not in got["matches"]


def test_no_match_says_so(ws: Workspace, tree: Path) -> None:
    got = grep(ws, "zebra")
    assert got["count"] == 0 and got["matches"] == "" and "no lines match" in got["note"]


def test_gitignored_files_are_not_searched(ws: Workspace, tree: Path) -> None:
    git(tree, "init", "-q")
    (tree / ".gitignore").write_text("src/\n")
    for engine in ("auto", "python"):
        names = {
            line.split(":")[0] for line in grep(ws, "foo", engine=engine)["matches"].splitlines()
        }
        assert names == {"a.py", "latin.txt"}


def test_many_matches_are_capped_with_the_total(ws: Workspace, root: Path) -> None:
    (root / "big.txt").write_text("hit\n" * 3_000)
    for engine in ("auto", "python"):
        got = grep(ws, "hit", engine=engine)
        assert got["count"] == 3_000 and len(got["matches"].splitlines()) == 2_000
        assert got["truncated"].startswith("showing 2000 of 3000 matching lines in 1 files")


@needs_rg
def test_patterns_rg_cannot_parse_fall_back_to_python(ws: Workspace, tree: Path) -> None:
    got = grep(ws, r"foo(?=\()", engine="rg")
    assert got == grep(ws, r"foo(?=\()", engine="python")
    assert got["matches"] == ""
    assert grep(ws, r"(?i)foo(?=\()")["matches"] == "a.py:2:def Foo():"


def test_bad_input(ws: Workspace, tree: Path) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        grep(ws, "foo(")
    with pytest.raises(ToolError, match="no such file or folder"):
        grep(ws, "foo", path="missing")
    with pytest.raises(ToolError, match="outside the workspace"):
        grep(ws, "root", path="/etc")


@needs_rg
def test_without_rg_on_the_path_the_fallback_answers_the_same(
    ws: Workspace, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_rg = grep(ws, "foo", ignore_case=True)
    monkeypatch.setenv("PATH", str(tree / "no-bin-here"))
    assert shutil.which("rg") is None
    assert grep(ws, "foo", ignore_case=True) == with_rg
    with pytest.raises(ToolError, match="ripgrep .* is not installed"):
        grep(ws, "foo", engine="rg")


def test_symlinks_out_of_the_workspace_are_not_searched(
    ws: Workspace, tree: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("password foo\n")
    (tree / "leak.txt").symlink_to(tmp_path / "secret.txt")
    for engine in ("auto", "python"):
        assert "password" not in grep(ws, "foo", engine=engine)["matches"]


@needs_rg
def test_parallel_rg_runs_merge_in_file_order(ws: Workspace, root: Path) -> None:
    for i in range(40):
        (root / f"f{i:02d}.txt").write_text("".join(f"hit {i} {j}\n" for j in range(100)))
    rg, python = grep(ws, "hit", engine="rg"), grep(ws, "hit", engine="python")
    assert rg == python
    assert rg["count"] == 4_000 and rg["files"] == 40
    assert rg["matches"].splitlines()[1999] == "f19.txt:100:hit 19 99"


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_nothing_leading_outside_is_searched(
    ws: Workspace, root: Path, tmp_path: Path, in_git: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("password\n")
    (root / "tracked").mkdir()
    (root / "tracked" / "secret.txt").write_text("nothing\n")
    (root / "a.txt").write_text("password is not here\n")
    (root / "linked").symlink_to(outside)
    if in_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
    # swapped for a symlink after git add: the index still names tracked/secret.txt
    (root / "tracked" / "secret.txt").unlink()
    (root / "tracked").rmdir()
    (root / "tracked").symlink_to(outside)
    for engine in ("auto", "python"):
        assert grep(ws, "password", engine=engine)["matches"] == "a.txt:1:password is not here"


def test_binary_is_a_nul_in_the_first_8_kb_for_both_engines(ws: Workspace, root: Path) -> None:
    (root / "early.bin").write_bytes(b"foo 1\n\0\nfoo 2\n")
    (root / "late.txt").write_bytes(b"foo 1\n" + b"y" * 9_000 + b"\n\0 foo 2\n")
    (root / "gone.txt").symlink_to(root / "missing.txt")
    for engine in ("auto", "python"):
        got = grep(ws, "foo", engine=engine)
        assert got["matches"] == "late.txt:1:foo 1\nlate.txt:3:\0 foo 2", engine


def test_files_read_whole_split_into_the_same_lines_as_streamed() -> None:
    rng = random.Random(7)
    pieces = [b"a", b"\n", b"\r", b"\r\n", "é".encode(), "😀".encode(), b"\xe9", b"\xff", b" "]
    samples = [b"", b"\n", b"x", b"x\r", b"\n\n"]
    for size in (7_998, 7_999, 8_000, 8_001, 8_002):
        samples += [b"a" * size + b"\r\nz", b"b" * size, "é".encode() * (size // 2) + b"\n"]
    for shift in range(4):  # a long line cut inside a character, valid UTF-8 or not
        samples += [
            b"a" * shift + "😀".encode() * 2_001 + b"\r\n",
            b"\xff" * shift + b"\xe9" * 8_003,
        ]
    samples += [b"".join(rng.choices(pieces, k=rng.randrange(4_000))) for _ in range(200)]
    samples += [b"".join(rng.choices(pieces[:6], k=rng.randrange(9_000))) for _ in range(50)]
    for data in samples:
        streamed = [decode_line(part)[0] for part, _ in iter_lines(io.BytesIO(data))]
        assert split_lines(data) == streamed, data[:80]


@needs_rg
def test_long_lines_are_cut_the_same_by_both_engines(ws: Workspace, root: Path) -> None:
    (root / "a" / "deeper").mkdir(parents=True)
    for i, size in enumerate((7_990, 8_000, 12_000)):
        (root / "a" / "deeper" / f"{i}.txt").write_text("foo " + "é" * size + "\n")
    rg = grep(ws, "foo", engine="rg")
    assert rg == grep(ws, "foo", engine="python")
    assert rg["matches"].endswith(" [... 3502 more characters]")  # 8,000 bytes: 4,002 chars


HOSTILE = [r"(?=a)(a+)+$", r"(a|aa)+(?<=b)", r"^(\w+\s?)*(?=$)z"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("pattern", HOSTILE)
def test_a_pattern_that_backtracks_forever_is_stopped(
    ws: Workspace, root: Path, pattern: str, engine: str
) -> None:
    (root / "a.txt").write_text("a" * 60 + "b\n" + "word " * 40 + "!\n")
    with pytest.raises(ToolError, match=r"grep stopped after 2 s.*\(a\+\)\+"):
        grep(ws, pattern, engine=engine, timeout=2)


INTERRUPT = """
import asyncio, json, os, sys
from pathlib import Path
from elelem_kernel.agent.toolbox import Call, Toolbox
from elelem_kernel.assembly.workspace_tools import add_workspace_tools
from elelem_kernel.tools.declaration import ToolContext

class Session:
    toolbox = Toolbox()
    tool_context = ToolContext(Path(sys.argv[1]))

def running():
    # whether a child of this process runs the Python regex engine
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if parent == me and b"pyregex" in f.read():
                    return True
        except (OSError, IndexError):
            pass
    return False

async def main():
    session = Session()
    add_workspace_tools(session.toolbox, session.tool_context)
    call = Call(id="c1", name="grep", arguments={"pattern": sys.argv[2]})
    assert session.toolbox.resolve(call, "auto") is None
    task = asyncio.ensure_future(session.toolbox.run(call))
    while not running() and not task.done():
        await asyncio.sleep(0.01)
    assert not task.done(), task.result()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        print(json.dumps({"cancelled": True, "children_left": running()}))

asyncio.run(main())
"""


@pytest.mark.timeout(200)
def test_an_interrupt_stops_a_long_match(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("a" * 60 + "b\n")
    script = tmp_path / "interrupt.py"
    script.write_text(INTERRUPT)
    # in a process of its own: before the fix the match held the GIL and nothing ended it
    done = subprocess.run(
        [sys.executable, str(script), str(root), r"(?=a)(a+)+$"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"cancelled": True, "children_left": False}


@needs_rg
def test_whole_folders_merge_in_file_order_within_the_bounds(ws: Workspace, root: Path) -> None:
    for i in range(30):
        folder = root / f"d{i % 3}" / f"e{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:02d}.txt").write_text("".join(f"hit {i} {j}\n" for j in range(100)))
    git(root, "init", "-q")
    rg, python = grep(ws, "hit", engine="rg"), grep(ws, "hit", engine="python")
    assert rg == python
    assert rg["count"] == 3_000 and rg["files"] == 30
    assert rg["matches"].splitlines()[0] == "d0/e0/f00.txt:1:hit 0 0"


@needs_rg
def test_a_file_of_a_whole_folder_not_listed_is_not_shown(root: Path) -> None:
    (root / "d").mkdir()
    (root / "d" / "listed.txt").write_text("foo listed\n")
    (root / "d" / "new.txt").write_text("foo created after the listing\n")
    rg = shutil.which("rg")
    assert rg is not None
    with Children(30) as group:
        found = _search_rg(rg, root, "foo", False, ["d/listed.txt"], ["d"], group)
    assert found is not None and found.lines == ["d/listed.txt:1:foo listed"]


def test_matches_in_any_order_keep_the_first_within_the_bounds() -> None:
    rng = random.Random(3)
    places = [(file, line) for file in range(40) for line in range(1, rng.randrange(2, 200))]
    texts = {place: "x" * rng.choice((1, 2, 400)) for place in places}
    expected = _Matches()
    for file, line in places:
        expected.add(f"f{file}", line, texts[file, line], file)
    assert len(expected.lines) < expected.count  # the bounds cut it
    for _ in range(5):
        rng.shuffle(places)
        shuffled, halves = _Matches(), [_Matches(), _Matches()]
        for n, (file, line) in enumerate(places):
            shuffled.add(f"f{file}", line, texts[file, line], file)
            halves[n % 2].add(f"f{file}", line, texts[file, line], file)
        halves[0].extend(halves[1])
        for got in (shuffled, halves[0]):
            assert got.lines == expected.lines
            assert (got.count, got.files) == (expected.count, expected.files)


@needs_rg
def test_names_over_several_command_lines_merge_in_file_order(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        (root / f"f{i:02d}.txt").write_text("".join(f"hit {i} {j}\n" for j in range(100)))
    monkeypatch.setattr(search, "_ARG_BYTES", 40)  # a few names per ripgrep
    rg, python = grep(ws, "hit", engine="rg"), grep(ws, "hit", engine="python")
    assert rg == python and rg["count"] == 3_000
