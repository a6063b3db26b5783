from __future__ import annotations

import asyncio
import json

import pytest

from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Call, Toolbox
from elelem_kernel.review.diff import collect
from elelem_kernel.review.review_tools import add_review_tools, run_git
from elelem_kernel.review.run import prepare
from elelem_kernel.review.target import resolve
from tests.scripted import Scripted


def use(session, name, **arguments):
    call = Call("c1", name, arguments)
    problem = session.toolbox.resolve(call, session.mode)
    assert problem is None, problem
    return asyncio.run(session.toolbox.run(call))


@pytest.fixture
def changed(repo):
    repo.commit(**{"app.py": "def f(x):\n    return x\n", "other.py": "y = 1\n"})
    repo.commit(**{"app.py": "def f(x):\n    if x == None:\n        return 0\n    return x\n"})
    return repo


def tools_for(repo, target=None):
    session = Session(Scripted(), Toolbox(), workspace=repo.root)
    t = resolve(target, repo.root)
    files = [f.path for f in collect(t).files]
    log = add_review_tools(session.tool_context, files, t, session.toolbox)
    return session, log


def test_report_finding_records_locates_and_captures_the_line(changed):
    session, log = tools_for(changed)
    result = use(
        session,
        "report_finding",
        path="b/app.py",
        line=2,
        severity="minor",
        title="None check",
        body="use is",
    )
    assert result["ok"] and result["location"] == "app.py:2" and "outside_diff" not in result
    (finding,) = log.findings
    assert (finding.path, finding.code, finding.outside_diff) == (
        "app.py",
        "    if x == None:",
        False,
    )
    assert session.tool_context.turn_extras["findings"][0]["title"] == "None check"


def test_finding_outside_the_diff_is_kept_but_flagged(changed):
    session, log = tools_for(changed)
    result = use(session, "report_finding", path="other.py", severity="nit", title="t", body="b")
    assert (
        result["ok"] and result["outside_diff"] is True and "not among the files" in result["note"]
    )
    assert log.findings[0].outside_diff


def test_report_finding_rejects_an_unknown_severity(changed):
    session, _ = tools_for(changed)
    call = Call(
        "c1", "report_finding", {"path": "app.py", "severity": "fatal", "title": "t", "body": "b"}
    )
    assert "severity" in session.toolbox.resolve(call, "plan")


def test_git_tool_runs_read_only_commands(changed):
    t = resolve(None, changed.root)
    assert "app.py" in run_git("log --stat -1", t)["output"]
    assert run_git("show HEAD:other.py", t)["output"] == "y = 1\n"


@pytest.mark.parametrize(
    "line",
    [
        "commit -m x",
        "push",
        "diff --output=/tmp/x HEAD",
        "diff --no-index /etc/passwd app.py",
        "-c x=y log",
        "",
    ],
)
def test_git_tool_refuses_what_could_write_or_escape(changed, line):
    result = run_git(line, resolve(None, changed.root))
    assert "error" in result and "output" not in result


def test_git_tool_diff_shows_notebooks_by_cell(repo, notebook):
    repo.commit(**{"nb.ipynb": notebook(("c1", "code", "x = 1"))})
    repo.commit(**{"nb.ipynb": notebook(("c1", "code", "x = 2"))})
    t = resolve(None, repo.root)
    out = run_git(t.command().removeprefix("git "), t)["output"]
    assert "## cell 1 id=c1 (code): modified" in out and "SECRET-OUTPUT" not in out


def test_git_tool_output_is_bounded(repo):
    repo.commit(**{"a.txt": "a\n"})
    repo.commit(**{"a.txt": "".join(f"line {i}\n" for i in range(20_000))})
    result = run_git("show HEAD", resolve(None, repo.root))
    assert (
        len(result["output"]) == 40_000
        and "output cut after 40000 characters" in result["truncated"]
    )


def test_prepare_switches_to_plan_and_restore_mode_undoes_it(changed):
    session = Session(Scripted(), Toolbox(), workspace=changed.root, mode="build")

    @session.toolbox.add("git", "someone else's git", {}, kind="execute")
    def other_git(args):
        return {"mine": True}

    review = prepare(session, "HEAD~1..HEAD", focus="None handling", severity="minor")
    prompt = review.prompt
    assert session.mode == "plan"
    assert {"report_finding", "git"} <= {t.name for t in session.toolbox.offered("plan")}
    assert "+    if x == None:" in prompt and "Focus on: None handling" in prompt
    assert "severity minor or worse (blocker, major, minor)" in prompt
    assert review.extras["review"]["reviewed"] == ["app.py"]
    review.close()
    assert session.mode == "build" and "report_finding" not in session.toolbox.tools
    assert session.toolbox.get("git").fn is other_git


def test_prepare_on_an_empty_diff_says_nothing_to_review(changed, capsys):
    session = Session(Scripted(), Toolbox(), workspace=changed.root, mode="build")
    assert prepare(session, "HEAD") is None
    assert capsys.readouterr().out.strip() == "nothing to review"
    assert session.mode == "build" and not session.toolbox.tools


def test_prepare_keeps_one_part_and_lists_the_rest(repo):
    repo.commit(**{"keep.py": "a = 1\n"})
    repo.commit(**{f"f{i}.py": "x = 1\n" * 4000 for i in range(3)})
    session = Session(Scripted(), Toolbox(), workspace=repo.root)
    review = prepare(session, None)
    reasons = {s["path"]: s["reason"] for s in review.extras["review"]["skipped"]}
    assert review.extras["review"]["reviewed"] == ["f0.py", "f1.py"]
    assert reasons == {"f2.py": "over the budget of one review turn"}
    assert "- f2.py: over the budget of one review turn" in review.prompt
    assert json.dumps(review.extras)  # the record must stay JSON


def test_report_finding_never_reads_outside_the_repository(changed, tmp_path):
    (tmp_path / "secret.txt").write_text("top secret\n")
    (changed.root / "link.txt").symlink_to(tmp_path / "secret.txt")
    session, log = tools_for(changed)
    for path in ("../secret.txt", str(tmp_path / "secret.txt"), "link.txt"):
        use(session, "report_finding", path=path, line=1, severity="nit", title="t", body="b")
    assert [f.code for f in log.findings] == [None, None, None]
    assert [f.outside_diff for f in log.findings] == [True, True, False]
    assert "top secret" not in collect(log.target).part_text(0)  # the link, not what it points to


def test_prepare_from_a_subfolder_tells_the_model_where_file_tools_start(repo):
    repo.commit(**{"pkg/mod.py": "a = 1\n"})
    repo.commit(**{"pkg/mod.py": "a = 2\n"})
    session = Session(Scripted(), Toolbox(), workspace=repo.root / "pkg")
    prompt = prepare(session, None).prompt
    assert (
        "+++ b/pkg/mod.py" in prompt
        and "Your file tools start in pkg/ inside the repository" in prompt
    )
    session = Session(Scripted(), Toolbox(), workspace=repo.root)
    assert "Your file tools start" not in prepare(session, None).prompt


def test_git_show_of_a_notebook_gives_cell_sources_without_outputs(repo, notebook):
    repo.commit(**{"nb.ipynb": notebook(("c1", "code", "x = 1"), ("m", "markdown", "# Hi"))})
    out = run_git("show HEAD:nb.ipynb", resolve(None, repo.root))["output"]
    assert out == (
        "HEAD:nb.ipynb: 2 cells (sources only; outputs and execution counts stripped)\n"
        "## cell 1 id=c1 (code)\nx = 1\n## cell 2 id=m (markdown)\n# Hi\n"
    )
    assert "error" in run_git("show HEAD:missing.ipynb", resolve(None, repo.root))


@pytest.fixture
def attacked(changed, tmp_path):
    """A repository with a match for `grep`, a secret outside it and a marker path."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET\nreturn\n")
    return changed, secret, tmp_path / "marker"


ATTACKS = [
    'grep -O"touch {marker}" return',
    "grep -O 'touch {marker}' return",
    "grep --open-files-in-pager='touch {marker}' return",
    "grep --open-files-in='touch {marker}' return",
    "grep --open='touch {marker}' return",
    "grep -nO'touch {marker}' return",
    "blame --cont={secret} app.py",
    "blame --cont {secret} app.py",
    "blame --contents={secret} app.py",
    "blame -S {secret} app.py",
    "blame -S{secret} app.py",
    "blame -wS{secret} app.py",
    "blame --ignore-revs-file={secret} app.py",
    "blame --ignore-revs-file {secret} app.py",
    "blame --ignore-revs={secret} app.py",
    "grep -f {secret}",
    "grep -f{secret}",
    "grep -nf{secret}",
    "grep --file={secret}",
    "grep --fil={secret}",
    "diff -O{secret} HEAD~1",
    "diff --output={secret}.out HEAD~1",
    "diff --out={secret}.out HEAD~1",
    "log --output={secret}.out",
    "show --textconv HEAD",
    "diff --ext HEAD~1",
    "grep --no-index TOPSECRET {secret}",
    "grep --untracked TOPSECRET",
    "blame {secret}",
    "log -- {secret}",
    "log -- ../secret.txt",
    "show HEAD -- ../secret.txt",
    "log --help",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_git_tool_refuses_options_that_run_programs_or_read_outside(attacked, attack):
    repo, secret, marker = attacked
    result = run_git(attack.format(marker=marker, secret=secret), resolve(None, repo.root))
    assert "error" in result and "output" not in result
    assert "TOPSECRET" not in json.dumps(result)
    assert not marker.exists()
    assert not (secret.parent / "secret.txt.out").exists()


def test_git_tool_names_the_allowed_options_when_it_refuses(changed):
    error = run_git("blame --cont=x app.py", resolve(None, changed.root))["error"]
    assert "--cont" in error and "-L" in error and "--porcelain" in error
    assert "abbreviat" in error


@pytest.mark.parametrize(
    "line",
    [
        "log --oneline -5",
        "log -n 1 --format=%an --stat",
        "log -n1 -p -- app.py",
        "log -S return --oneline",
        "log -L 1,2:app.py",
        "show --stat HEAD~1",
        "diff -U1 --stat HEAD~1 HEAD -- app.py",
        "diff --name-only HEAD~1",
        "blame -L 1,2 app.py",
        "blame -L1,2 -w -- app.py",
        "blame --porcelain HEAD~1 -- app.py",
        "grep -n -e return",
        "grep -in return -- app.py",
        "grep -C1 return HEAD~1",
        "status --short --branch",
        "ls-files -s",
    ],
)
def test_git_tool_allows_read_only_options(changed, line):
    result = run_git(line, resolve(None, changed.root))
    assert "error" not in result, result
    assert result["output"]
