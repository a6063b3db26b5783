from __future__ import annotations

import pytest

from elelem_kernel.errors import ReviewError
from elelem_kernel.review.git import EMPTY_TREE
from elelem_kernel.review.target import resolve


def test_range_resolves_both_ends(repo):
    a = repo.commit(**{"a.py": "x = 1\n"})
    b = repo.commit(**{"a.py": "x = 2\n"})
    t = resolve("HEAD~1..HEAD", repo.root)
    assert (t.base, t.head) == (a, b)
    assert t.command() == f"git diff {a} {b}"


def test_three_dot_range_uses_merge_base(repo):
    base = repo.commit(**{"a.py": "x = 1\n"})
    repo.git("checkout", "-q", "-b", "topic")
    topic = repo.commit(**{"b.py": "y = 1\n"})
    repo.git("checkout", "-q", "main")
    repo.commit(**{"c.py": "z = 1\n"})
    t = resolve("main...topic", repo.root)
    assert (t.base, t.head) == (base, topic)


def test_single_rev_means_since_rev_up_to_the_working_tree(repo):
    first = repo.commit(**{"a.py": "x = 1\n"})
    repo.commit(**{"a.py": "x = 2\n"})
    t = resolve("HEAD~1", repo.root)
    assert (t.base, t.head) == (first, None)


def test_paths_restrict_the_target(repo):
    repo.commit(**{"a.py": "x = 1\n", "src/b.py": "y = 1\n"})
    repo.write("src/b.py", "y = 2\n")
    repo.write("a.py", "x = 2\n")
    t = resolve("src/b.py", repo.root)
    assert t.paths == ("src/b.py",) and t.label == "uncommitted changes"


def test_nothing_means_uncommitted_changes_including_untracked(repo):
    head = repo.commit(**{"a.py": "x = 1\n"})
    repo.write("new.py", "print(1)\n")
    t = resolve(None, repo.root)
    assert (t.base, t.head, t.label) == (head, None, "uncommitted changes")
    assert t.untracked == ("new.py",)


def test_nothing_without_uncommitted_changes_means_the_last_commit(repo):
    first = repo.commit(**{"a.py": "x = 1\n"})
    second = repo.commit(**{"a.py": "x = 2\n"})
    t = resolve("", repo.root)
    assert (t.base, t.head, t.label) == (first, second, "the last commit")


def test_root_commit_is_diffed_against_the_empty_tree(repo):
    only = repo.commit(**{"a.py": "x = 1\n"})
    t = resolve(None, repo.root)
    assert (t.base, t.head) == (EMPTY_TREE, only)


def test_unchanged_path_is_reviewed_whole(repo):
    head = repo.commit(**{"a.py": "x = 1\n"})
    repo.commit(**{"b.py": "y = 1\n"})
    t = resolve("a.py", repo.root)
    assert t.whole and t.base == EMPTY_TREE and t.head != head


def test_not_a_git_repository(tmp_path):
    with pytest.raises(ReviewError, match="not a git repository"):
        resolve(None, tmp_path)


@pytest.mark.parametrize("target", ["nosuchbranch", "main..nosuchbranch", "HEAD~5"])
def test_unknown_revision(repo, target):
    repo.commit(**{"a.py": "x = 1\n"})
    with pytest.raises(ReviewError, match="unknown revision"):
        resolve(target, repo.root)
