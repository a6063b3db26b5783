from __future__ import annotations

import subprocess

from elelem_kernel.review.diff import collect
from elelem_kernel.review.target import resolve


def diff_of(repo, target=None, **kw):
    return collect(resolve(target, repo.root), **kw)


def test_text_file_gets_the_unified_diff(repo):
    repo.commit(**{"a.py": "x = 1\ny = 2\n"})
    repo.commit(**{"a.py": "x = 1\ny = 3\n"})
    d = diff_of(repo)
    (f,) = d.files
    assert (f.path, f.status) == ("a.py", "modified")
    assert "-y = 2\n+y = 3\n" in f.text and "@@ -1,2 +1,2 @@" in f.text
    assert d.reviewed == ["a.py"] and d.skipped == []


def test_empty_diff(repo):
    repo.commit(**{"a.py": "x = 1\n"})
    d = diff_of(repo, "HEAD")
    assert d.empty and d.parts == []


def test_binary_files_are_named_not_pasted(repo):
    repo.commit(**{"a.py": "x = 1\n"})
    blob = bytes(range(256)) * 40
    repo.commit(**{"logo.png": blob, "a.py": "x = 2\n"})
    d = diff_of(repo)
    binary = next(f for f in d.files if f.path == "logo.png")
    assert binary.binary and "binary file added; not shown" in binary.text
    assert "GIT binary patch" not in d.part_text(0) and "logo.png" not in d.part_text(0)
    assert {"path": "logo.png", "reason": "binary file"} in d.skipped
    assert d.reviewed == ["a.py"]


def test_untracked_files_are_part_of_uncommitted_changes(repo):
    repo.commit(**{"a.py": "x = 1\n"})
    repo.write("new.py", "a = 1\nb = 2\n")
    repo.write("blob.bin", b"\0\1\2")
    d = diff_of(repo)
    new = next(f for f in d.files if f.path == "new.py")
    assert "@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n" in new.text
    assert next(f for f in d.files if f.path == "blob.bin").binary


def test_deleted_file_is_named_with_its_size(repo):
    repo.commit(**{"a.py": "x = 1\n" * 50, "b.py": "y = 1\n"})
    repo.git("rm", "-q", "a.py")
    d = diff_of(repo)
    (f,) = d.files
    assert f.status == "deleted" and "file deleted (50 lines)" in f.text


def test_notebook_is_diffed_cell_by_cell_with_ids_and_no_outputs(repo, notebook):
    before = notebook(
        ("intro", "markdown", "# Title"), ("c1", "code", "x = 1\ny = 2"), ("c2", "code", "z = 3")
    )
    after = notebook(
        ("intro", "markdown", "# Title"),
        ("c1", "code", "x = 1\ny = x / 0"),
        ("c3", "code", "print(y)"),
    )
    repo.commit(**{"nb.ipynb": before})
    repo.commit(**{"nb.ipynb": after})
    (f,) = diff_of(repo).files
    assert f.notebook
    assert (
        "## cell 2 id=c1 (code): modified\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = x / 0\n" in f.text
    )
    assert "## cell 3 id=c3 (code): added\n@@ -0,0 +1 @@\n+print(y)\n" in f.text
    assert "## cell 3 id=c2 (code): deleted" in f.text
    assert "intro" not in f.text
    for noise in ("SECRET-OUTPUT", '"execution_count"', '"cell_type"', '"outputs"'):
        assert noise not in f.text


def test_notebook_with_only_new_outputs_has_nothing_to_review(repo, notebook):
    cells = [("c1", "code", "x = 1")]
    repo.commit(**{"nb.ipynb": notebook(*cells, outputs=False)})
    repo.commit(**{"nb.ipynb": notebook(*cells, outputs=True)})
    (f,) = diff_of(repo).files
    assert "only outputs, execution counts or metadata changed" in f.text


def test_broken_notebook_falls_back_to_the_text_diff(repo):
    repo.commit(**{"nb.ipynb": "{not json\n"})
    repo.commit(**{"nb.ipynb": "{still not json\n"})
    (f,) = diff_of(repo).files
    assert not f.notebook and "+{still not json" in f.text


def test_huge_diff_is_split_by_file_and_the_oversized_file_skipped(repo):
    repo.commit(**{"keep.py": "a = 1\n"})
    repo.commit(
        **{
            "big.py": "".join(f"v{i} = {i}\n" for i in range(100_000)),
            "small1.py": "x = 1\n" * 30,
            "small2.py": "y = 2\n" * 30,
            "keep.py": "a = 2\n",
        }
    )
    d = diff_of(repo, budget=400)
    big = next(s for s in d.skipped if s["path"] == "big.py")
    assert "diff too large (1000" in big["reason"]
    assert sorted(d.reviewed) == ["keep.py", "small1.py", "small2.py"]
    assert len(d.parts) == 3 and all(len(d.part_text(i)) <= 400 for i in range(3))


def test_files_past_max_parts_are_skipped_with_the_reason(repo):
    repo.commit(**{f"f{i}.py": f"x = {i}\n" * 20 for i in range(4)})
    d = diff_of(repo, budget=300, max_parts=2)
    assert len(d.parts) == 2
    assert [s["reason"] for s in d.skipped] == ["over the review budget (2 parts)"] * 2


def test_huge_untracked_file_is_named_not_read(repo, monkeypatch):
    monkeypatch.setattr("elelem_kernel.review.diff.MAX_UNTRACKED", 100)
    repo.commit(**{"a.py": "x = 1\n"})
    repo.write("dump.sql", "insert;\n" * 50)
    d = diff_of(repo)
    assert d.skipped == [{"path": "dump.sql", "reason": "untracked file too large (400 bytes)"}]
    assert "insert" not in d.files[0].text


def test_unmerged_paths_fall_back_to_one_diff_per_file(repo):
    repo.commit(**{"a.py": "x = 1\n", "b.py": "y = 1\n"})
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit(**{"a.py": "x = 2\n"})
    repo.git("checkout", "-q", "main")
    repo.commit(**{"a.py": "x = 3\n"})
    repo.write("b.py", "y = 2\n")
    proc = subprocess.run(
        ["git", "-C", str(repo.root), "merge", "-q", "topic"], capture_output=True
    )
    assert b"CONFLICT" in proc.stdout + proc.stderr
    d = diff_of(repo)
    assert sorted(f.path for f in d.files) == ["a.py", "b.py"]
    assert "x = 3" in next(f.text for f in d.files if f.path == "a.py")
    assert "+y = 2" in next(f.text for f in d.files if f.path == "b.py")
