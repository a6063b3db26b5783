"""6. Tools at scale: grep and list on a 20,000-file tree, read of a 200 MB file.

The tree is a git repository of generated text files (cached in ~/.cache/elelem-bench).
References in the same run: `rg -n PATTERN`, `git ls-files`, and `git ls-files -c -o
--exclude-standard` (the set `list` gives: tracked and untracked files) as processes. Ours:
the `grep` tool (ripgrep engine when installed, and the pure-Python engine) and the `list`
tool, called in-process through the same functions the agent's tools use. Ratio = ours / reference, median of paired runs.
The 200 MB read runs in a fresh process: its peak RSS (VmHWM) after the reads minus before.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import interleave, median, ms, paired, result

NAME = "tools"

NEEDLE = "needle_7"
CACHE = Path.home() / ".cache" / "elelem-bench"
READ_PROBE = """
import sys, time
from elelem_kernel.tools.file_tools import read
from elelem_kernel.tools.workspace import Workspace

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

ws = Workspace(sys.argv[1])
before = hwm()
start = time.perf_counter()
head = read(ws, sys.argv[2])
tail = read(ws, sys.argv[2], offset=int(sys.argv[3])) if int(sys.argv[3]) else {"content": ""}
took = time.perf_counter() - start
print(before, hwm(), took, head["total_lines"], len(head["content"]) + len(tail["content"]))
"""


def cached_tree(files: int) -> Path:
    """The generated tree, kept between runs in ~/.cache/elelem-bench (it is deterministic)."""
    root = CACHE / f"tree-{files}"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        make_tree(root, files)
        (root / ".git" / "info" / "exclude").write_text(".complete\n")
        (root / ".complete").write_text("")
    return root


def make_tree(root: Path, files: int) -> Path:
    """`files` small text files in folders of 200, added to a git index."""
    root.mkdir(parents=True)
    for i in range(files):
        folder = root / f"pkg{i // 200:03d}"
        if i % 200 == 0:
            folder.mkdir()
        lines = [f"line {j} of file {i}: some ordinary text to search through" for j in range(30)]
        if i % 50 == 0:
            lines[7] = f"the {NEEDLE} is here in file {i}"
        (folder / f"mod{i:05d}.txt").write_text("\n".join(lines) + "\n")
    git = ["git", "-c", "user.email=b@b", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    return root


def tree_rows(root: Path, reps: int, data: dict) -> list[tuple]:
    from elelem_kernel.tools.file_tools import list_files
    from elelem_kernel.tools.search import grep
    from elelem_kernel.tools.workspace import Workspace

    ws = Workspace(root)
    rg = shutil.which("rg")
    cases = {
        "git_ls_files": lambda: subprocess.run(
            ["git", "ls-files"], cwd=root, check=True, capture_output=True
        ),
        "git_ls_all": lambda: subprocess.run(
            ["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"],
            cwd=root,
            check=True,
            capture_output=True,
        ),
        "git_neutral": lambda: neutral_listing(root),
        "list": lambda: list_files(ws),
        "grep": lambda: grep(ws, NEEDLE),
        "grep_python": lambda: grep(ws, NEEDLE, engine="python"),
    }
    if rg:
        cases["rg"] = lambda: subprocess.run([rg, "-n", NEEDLE], cwd=root, capture_output=True)
        cases["rg_listed"] = lambda: listed_rg(rg, root)
    found = grep(ws, NEEDLE)
    data["grep_matches"] = found.get("count", found.get("matches"))
    t = interleave(cases, reps)  # the grep above warmed the page cache
    data.update(t)
    rows = [
        ("git ls-files (reference)", ms(median(t["git_ls_files"])), "ms"),
        ("list tool", ms(median(t["list"])), "ms"),
        ("list ÷ git ls-files", paired(t["list"], t["git_ls_files"]), "×"),
        (
            "git ls-files -c -o --exclude-standard (the same set: tracked and untracked)",
            ms(median(t["git_ls_all"])),
            "ms",
        ),
        (
            "  ÷ git ls-files (the untracked walk alone)",
            paired(t["git_ls_all"], t["git_ls_files"]),
            "×",
        ),
        ("list ÷ git ls-files -c -o", paired(t["list"], t["git_ls_all"]), "×"),
        (
            "  ÷ git ls-files (the repository's config read, then ls-files -c -o)",
            paired(t["git_neutral"], t["git_ls_files"]),
            "× (the two git processes a neutral listing starts: the floor)",
        ),
        ("list ÷ config read + git ls-files -c -o", paired(t["list"], t["git_neutral"]), "×"),
    ]
    if rg:
        rows += [
            ("rg -n (reference)", ms(median(t["rg"])), "ms"),
            ("grep tool (ripgrep engine)", ms(median(t["grep"])), "ms"),
            ("grep ÷ rg", paired(t["grep"], t["rg"]), "×"),
            (
                "  ÷ rg (git's list, then rg over it)",
                paired(t["rg_listed"], t["rg"]),
                "× (the grep tool's design as processes: the floor of a confined search)",
            ),
            ("grep ÷ git's list, then rg", paired(t["grep"], t["rg_listed"]), "×"),
            ("grep tool, Python engine ÷ rg", paired(t["grep_python"], t["rg"]), "×"),
        ]
    else:
        rows.append(("grep tool (no rg installed: Python engine)", ms(median(t["grep"])), "ms"))
    return rows


def neutral_listing(root: Path) -> bytes:
    """The git processes of the `list` tool, as processes only: the repository's config
    file read on its own (tools/git_command.py reads it before any git runs there, so a
    setting cannot make git run a program), then `git ls-files -c -o`; the names it
    printed."""
    config = ["git", "--git-dir=/nonexistent", "config", "--file", str(root / ".git" / "config")]
    subprocess.run([*config, "--list", "--no-includes", "-z"], cwd="/", capture_output=True)
    files = ["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"]
    return subprocess.run(files, cwd=root, capture_output=True, check=True).stdout


def listed_rg(rg: str, root: Path) -> None:
    """What the grep tool does, as processes only: git lists the files as `list` does
    (`neutral_listing`: the config read, then tracked and untracked names), then one
    ripgrep with the tool's threads searches the folders holding them without entering
    subfolders, as the tool gives a folder all of whose files are listed
    (`listing.whole_folders`: every folder of this tree), and names the files at the top.
    Left out: the tool's own reading of each folder, which tells it that."""
    from elelem_kernel.tools.search import RG_THREADS

    names = neutral_listing(root)
    parents = {name.rpartition(b"/")[0] or name for name in names.split(b"\0") if name}
    search = [rg, "--no-config", "--null", "-n", "--threads", str(RG_THREADS), "--no-ignore"]
    search += ["--hidden", "--max-depth", "1", "--regexp", NEEDLE, "--", *sorted(parents)]
    subprocess.run(search, cwd=root, capture_output=True, check=False)


def make_big(path: Path, size: int, line_bytes: int = 100) -> int:
    """A text file of about `size` bytes in lines of `line_bytes`; its line count."""
    line = b"x" * (line_bytes - 1) + b"\n"
    block = line * max(1, 1_000_000 // line_bytes)
    lines = 0
    with open(path, "wb") as f:
        while f.tell() < size:
            f.write(block)
            lines += block.count(b"\n")
    return lines


def probe_read(root: Path, name: str, tail_offset: int) -> tuple[int, int, float, int, int]:
    """Read `name` in a fresh process: peak RSS before/after (KiB), seconds, lines, chars."""
    out = subprocess.run(
        [sys.executable, "-c", READ_PROBE, str(root), name, str(tail_offset)],
        capture_output=True,
        text=True,
        check=True,
    )
    before, after, took, total, shown = out.stdout.split()
    return int(before), int(after), float(took), int(total), int(shown)


def read_rows(root: Path, size: int, data: dict) -> list[tuple]:
    mb = f"{size / 1e6:g} MB"
    lines = make_big(root / "big.txt", size)
    before, after, took, total, shown = probe_read(root, "big.txt", lines - 100)
    (root / "big.txt").unlink()
    make_big(root / "oneline.txt", size, line_bytes=size)
    one_before, one_after, one_took, _, _ = probe_read(root, "oneline.txt", 0)
    data.update(
        read_file_mb=size / 1e6,
        read_peak_rss=after * 1024,
        read_peak_growth=(after - before) * 1024,
        read_seconds=took,
        read_one_line_peak_growth=(one_after - one_before) * 1024,
        read_one_line_seconds=one_took,
    )
    return [
        (f"read head + tail of a {mb} file", round(took, 2), f"s, {total:,} lines counted"),
        (
            "  peak RSS growth during those reads",
            round((after - before) / 1024, 1),
            f"MB (process peak {after / 1024:.0f} MB; {shown:,} chars shown)",
        ),
        (f"read a {mb} file that is one line", round(one_took, 2), "s"),
        (
            "  peak RSS growth during that read",
            round((one_after - one_before) / 1024, 1),
            f"MB (process peak {one_after / 1024:.0f} MB)",
        ),
    ]


def run(
    quick: bool = False, smoke: bool = False, files: int | None = None, big_mb: float | None = None
) -> dict:
    files = files or (60 if smoke else 5_000 if quick else 20_000)
    size = int((big_mb or (0.2 if smoke else 50 if quick else 200)) * 1_000_000)
    reps = 1 if smoke else 2 if quick else 3
    tmp = Path(tempfile.mkdtemp(prefix="elelem-bench-tools-"))
    data: dict = {"files": files}
    try:
        rows = tree_rows(cached_tree(files), reps, data)
        (tmp / "big").mkdir()
        rows += read_rows(tmp / "big", size, data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result("tools", f"6. Tools at scale ({files:,} files)", rows, **data)
