"""read, list, write and edit against real files."""

from __future__ import annotations

import subprocess
import tracemalloc
from pathlib import Path

import pytest

from elelem_kernel.agent.media import take_images
from elelem_kernel.errors import ToolError
from elelem_kernel.tools import file_tools
from elelem_kernel.tools.bounds import MAX_BYTES
from elelem_kernel.tools.workspace import Workspace
from tests.git import git
from tests.pictures import png, png64


def test_read_numbers_lines_and_reports_the_total(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    got = file_tools.read(ws, "a.txt")
    assert got["content"] == "     1\tone\n     2\ttwo\n     3\tthree"
    assert got["total_lines"] == 3 and got["lines"] == "1-3"
    assert "truncated" not in got


def test_read_a_range_says_how_to_continue(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    got = file_tools.read(ws, "a.txt", offset=10, limit=5)
    assert got["content"].splitlines()[0] == "    10\tline 10"
    assert got["lines"] == "10-14" and got["total_lines"] == 100
    assert got["truncated"] == "showing lines 10-14 of 100; call read with offset=15 for more"


def test_read_missing_file_folder_and_past_the_end(ws: Workspace, root: Path) -> None:
    with pytest.raises(ToolError, match='no such file: "nope.txt". Call list'):
        file_tools.read(ws, "nope.txt")
    (root / "d").mkdir()
    with pytest.raises(ToolError, match="is a folder"):
        file_tools.read(ws, "d")
    (root / "a.txt").write_text("x\ny")
    with pytest.raises(ToolError, match="offset 5 is past the end of a.txt: it has 2 lines"):
        file_tools.read(ws, "a.txt", offset=5)


def test_read_empty_file(ws: Workspace, root: Path) -> None:
    (root / "e.txt").write_text("")
    got = file_tools.read(ws, "e.txt")
    assert got["content"] == "" and got["total_lines"] == 0 and "empty" in got["note"]


def test_read_refuses_binary_files(ws: Workspace, root: Path) -> None:
    (root / "data.bin").write_bytes(b"\0\1\2" + bytes(range(256)))
    with pytest.raises(ToolError, match=r'"data.bin" is a binary file \(.*\); read shows text'):
        file_tools.read(ws, "data.bin")


def test_read_of_an_image_returns_the_image(ws: Workspace, root: Path) -> None:
    (root / "plot.dat").write_bytes(png(64, 48))  # known by its bytes, not its name
    got = file_tools.read(ws, "plot.dat")
    assert got["path"] == "plot.dat" and got["image"].startswith("64×48 PNG")
    assert got["_images"] == [{"mime_type": "image/png", "data": png64(64, 48)}]
    assert "content" not in got


def test_a_broken_image_read_is_described_not_sent(ws: Workspace, root: Path) -> None:
    pytest.importorskip("PIL")  # the session checks the picture through Pillow
    (root / "cut.png").write_bytes(png(2000, 10)[:70])  # a real header, its pixels cut off
    got = file_tools.read(ws, "cut.png")
    assert got["image"].startswith("2000×10 PNG")
    assert take_images(got) == []
    [why] = got["images_not_shown"]
    assert why.startswith("2000×10 PNG, 1 KB: could not be read (")
    (root / "odd.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    odd = file_tools.read(ws, "odd.png")
    assert take_images(odd) == [] and "too many pixels" in odd["images_not_shown"][0]


def test_read_replaces_undecodable_bytes(ws: Workspace, root: Path) -> None:
    (root / "latin.txt").write_bytes("café\n".encode("latin-1") + b"ok\n")
    got = file_tools.read(ws, "latin.txt")
    assert got["content"] == "     1\tcaf\ufffd\n     2\tok"
    assert "U+FFFD" in got["note"]


def test_read_cuts_very_long_lines(ws: Workspace, root: Path) -> None:
    (root / "min.js").write_text("x" * 1_000_000 + "\nend\n")
    got = file_tools.read(ws, "min.js")
    first, second = got["content"].splitlines()
    assert len(first) < 2_100 and "line cut: 1000001 bytes" in first
    assert second == "     2\tend" and got["total_lines"] == 2


def test_read_20mb_file_is_bounded_in_result_and_memory(ws: Workspace, root: Path) -> None:
    big = root / "big.log"
    line = "x" * 99 + "\n"
    with open(big, "w") as f:
        for _ in range(200):
            f.write(line * 1000)
    assert big.stat().st_size == 20_000_000
    tracemalloc.start()
    try:
        head = file_tools.read(ws, "big.log")
        middle = file_tools.read(ws, "big.log", offset=150_000, limit=10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, f"reading used {peak} bytes at its peak"
    assert len(head["content"]) <= MAX_BYTES
    assert head["total_lines"] == 200_000
    last = head["lines"].split("-")[1]
    assert head["truncated"].endswith(f"of 200000; call read with offset={int(last) + 1} for more")
    assert middle["lines"] == "150000-150009" and middle["total_lines"] == 200_000


def test_list_walks_and_filters_outside_git(ws: Workspace, root: Path) -> None:
    for name in ("a.py", "b.txt", "src/c.py", "src/deep/d.py", "__pycache__/a.pyc", ".git/x"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    got = file_tools.list_files(ws)
    assert got["files"] == ["a.py", "b.txt", "src/c.py", "src/deep/d.py"]
    assert file_tools.list_files(ws, pattern="*.py")["files"] == [
        "a.py",
        "src/c.py",
        "src/deep/d.py",
    ]
    assert file_tools.list_files(ws, "src", "deep/*.py")["files"] == ["src/deep/d.py"]
    none = file_tools.list_files(ws, pattern="*.rs")
    assert none["files"] == [] and none["count"] == 0 and "no files match" in none["note"]
    with pytest.raises(ToolError, match='no such file or folder: "nowhere"'):
        file_tools.list_files(ws, "nowhere")


def test_list_respects_gitignore_in_a_repo(ws: Workspace, root: Path) -> None:
    git(root, "init", "-q")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    for name in ("tracked.py", "untracked.py", "noise.log", "build/out.bin", "data/raw.csv"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    git(root, "add", "tracked.py", ".gitignore")
    got = file_tools.list_files(ws)
    assert got["files"] == [".gitignore", "data/raw.csv", "tracked.py", "untracked.py"]
    # an ignored folder asked for by name is still listed
    assert file_tools.list_files(ws, "build")["files"] == ["build/out.bin"]


def test_list_is_capped_with_a_count_of_what_was_left_out(ws: Workspace, root: Path) -> None:
    # 100-character names reach the 50 KB bound well before the 2,000-line one
    for i in range(600):
        (root / f"{i:04d}{'n' * 96}").write_text("")
    got = file_tools.list_files(ws)
    shown = len(got["files"])
    assert 400 < shown < 500 and got["count"] == 600
    assert sum(len(f) for f in got["files"]) <= MAX_BYTES
    assert f"showing {shown} of 600 files ({600 - shown} left out)" in got["truncated"]


def test_write_creates_parents_then_replaces(ws: Workspace, root: Path) -> None:
    got = file_tools.write(ws, "new/dir/a.txt", "héllo\n")
    assert got == {"path": "new/dir/a.txt", "bytes": 7, "action": "created"}
    assert (root / "new/dir/a.txt").read_text() == "héllo\n"
    assert file_tools.write(ws, "new/dir/a.txt", "bye")["action"] == "replaced"
    assert (root / "new/dir/a.txt").read_text() == "bye"


def test_write_refuses_escapes_folders_and_the_open_notebook(ws: Workspace, root: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        file_tools.write(ws, "../evil.txt", "x")
    assert not (root.parent / "evil.txt").exists()
    (root / "d").mkdir()
    with pytest.raises(ToolError, match="is a folder"):
        file_tools.write(ws, "d", "x")
    nb = root / "open.ipynb"
    nb.write_text("{}")
    with pytest.raises(ToolError, match="open in the frontend.*propose_cell"):
        file_tools.write(ws, "open.ipynb", "x", protected=nb)
    assert nb.read_text() == "{}"


def test_write_preview_is_the_diff(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    preview = file_tools.write_preview(ws, "a.txt", "one\nTWO\n")
    assert preview.startswith("replace a.txt")
    assert "-two\n+TWO\n" in preview
    assert file_tools.write_preview(ws, "b.txt", "new\n").startswith("create b.txt")


def test_edit_replaces_once_and_returns_the_diff(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n")
    got = file_tools.edit(ws, "a.py", "return 1", "return 2")
    assert got["replacements"] == 1
    assert "-    return 1\n+    return 2\n" in got["diff"]
    assert (root / "a.py").read_text() == "def f():\n    return 2\n"


def test_edit_ambiguous_names_the_lines(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\nx = 1\n")
    with pytest.raises(ToolError, match=r"appears 2 times in a.py \(lines 1, 3\).*replace_all"):
        file_tools.edit(ws, "a.py", "x = 1", "x = 3")
    assert (root / "a.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    got = file_tools.edit(ws, "a.py", "x = 1", "x = 3", replace_all=True)
    assert got["replacements"] == 2
    assert (root / "a.py").read_text() == "x = 3\ny = 2\nx = 3\n"


def test_edit_missing_old_explains(ws: Workspace, root: Path) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ToolError, match="old was not found in a.py.*Call read"):
        file_tools.edit(ws, "a.py", "return 3", "return 2")
    with pytest.raises(ToolError, match="indentation is ignored"):
        file_tools.edit(ws, "a.py", "def f():\n  return 1", "x")
    with pytest.raises(ToolError, match="line numbers"):
        file_tools.edit(ws, "a.py", "     2\t    return 1", "x")
    with pytest.raises(ToolError, match='no such file: "b.py". To create a file, call write'):
        file_tools.edit(ws, "b.py", "a", "b")
    with pytest.raises(ToolError, match="nothing to change"):
        file_tools.edit(ws, "a.py", "return 1", "return 1")


def test_edit_keeps_crlf_line_endings(ws: Workspace, root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    file_tools.edit(ws, "w.txt", "a\nb", "A\nB")
    assert (root / "w.txt").read_bytes() == b"A\r\nB\r\nc\r\n"


def test_edit_refuses_binary_and_non_utf8(ws: Workspace, root: Path) -> None:
    (root / "b.bin").write_bytes(b"a\0b")
    with pytest.raises(ToolError, match="not a text file"):
        file_tools.edit(ws, "b.bin", "a", "b")
    (root / "l.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(ToolError, match="not valid UTF-8"):
        file_tools.edit(ws, "l.txt", "caf", "x")


def test_edit_preview_shows_the_diff_or_the_failure(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("k = 1\n")
    assert "-k = 1\n+k = 2\n" in file_tools.edit_preview(ws, "a.txt", "k = 1", "k = 2")
    assert "would fail: old was not found" in file_tools.edit_preview(ws, "a.txt", "zz", "y")
    assert (root / "a.txt").read_text() == "k = 1\n"


def _leaky_tree(root: Path, outside: Path) -> None:
    """Files inside, plus every way a listed name could lead out of the workspace."""
    outside.mkdir()
    (outside / "secret.txt").write_text("password\n")
    (root / "src").mkdir()
    (root / "src" / "a.txt").write_text("password is not here\n")
    (root / "alias.txt").symlink_to(root / "src" / "a.txt")
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "linked").symlink_to(outside)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_list_leaves_out_what_leads_outside(
    ws: Workspace, root: Path, tmp_path: Path, in_git: bool
) -> None:
    _leaky_tree(root, tmp_path / "outside")
    if in_git:
        # a tracked folder later swapped for a symlink: git's index still names its files
        (root / "moved").mkdir()
        (root / "moved" / "secret.txt").write_text("password\n")
        (root / "gone.txt").write_text("")
        git(root, "init", "-q")
        git(root, "add", "-A")
        (root / "moved" / "secret.txt").unlink()
        (root / "moved").rmdir()
        (root / "moved").symlink_to(tmp_path / "outside")
        (root / "gone.txt").unlink()
    assert file_tools.list_files(ws)["files"] == ["alias.txt", "src/a.txt"]


def test_list_names_a_conflicted_file_once(ws: Workspace, root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("base\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "other")
    (root / "a.txt").write_text("other\n")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    (root / "a.txt").write_text("main\n")
    git(root, "commit", "-q", "-am", "main")
    with pytest.raises(subprocess.CalledProcessError):
        git(root, "merge", "-q", "other")
    assert file_tools.list_files(ws)["files"] == ["a.txt"]
