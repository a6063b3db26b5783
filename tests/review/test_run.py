from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from elelem_kernel.agent.session import Session
from elelem_kernel.agent.toolbox import Toolbox
from elelem_kernel.cli.review_command import main
from elelem_kernel.review.report import render
from elelem_kernel.review.run import review
from tests.review.test_report import SCHEMA
from tests.scripted import Scripted, call, say

PLANTED = "def mean(values):\n    total = sum(values)\n    return total / len(values)\n"


@pytest.fixture
def planted(repo):
    repo.commit(**{"stats.py": "def mean(values):\n    return 0\n", "README.md": "# stats\n"})
    repo.commit(**{"stats.py": PLANTED})
    return repo


@pytest.fixture
def demo(monkeypatch, tmp_path):
    monkeypatch.setenv("ELELEM_PROVIDER", "demo")
    monkeypatch.setenv("ELELEM_DEMO_DELAY", "0")
    monkeypatch.setenv("HOME", str(tmp_path))


def scripted_session(repo, *rounds):
    return Session(Scripted(*rounds), Toolbox(), workspace=repo.root)


def test_model_that_never_calls_report_finding_still_gives_the_review(planted):
    session = scripted_session(planted, say("`mean` divides by zero on an empty list."))
    result = review(None, session=session, workspace=planted.root)
    assert result.findings == [] and result.summary == "`mean` divides by zero on an empty list."
    assert result.reviewed == ["stats.py"] and not result.errors
    assert "divides by zero on an empty list" in render(result, "markdown")


def test_finding_outside_the_diff_is_kept_flagged_and_in_the_record(planted):
    args = {"path": "README.md", "line": 1, "severity": "nit", "title": "Title", "body": "b"}
    session = scripted_session(planted, call("report_finding", args), say("done"))
    result = review(None, session=session, workspace=planted.root)
    (finding,) = result.findings
    assert finding.outside_diff and finding.code == "# stats"
    record = session.conversation.turns[-1]
    assert record["findings"][0]["outside_diff"] is True
    assert record["review"]["reviewed"] == ["stats.py"]
    assert session.mode == "build" and "report_finding" not in session.toolbox.tools


def test_large_diff_is_reviewed_in_parts(repo):
    repo.commit(**{"keep.py": "a = 1\n"})
    repo.commit(**{"a.py": "x = 1\n" * 40, "b.py": "y = 1\n" * 40})
    provider = Scripted(say("part one"), say("part two"))
    session = Session(provider, Toolbox(), workspace=repo.root)
    result = review(None, session=session, workspace=repo.root, budget=400)
    prompts = [sent["messages"][-1]["content"] for sent in provider.sent]
    assert "part 1 of 2" in prompts[0] and "+++ b/a.py" in prompts[0] and "b.py" not in prompts[0]
    assert "part 2 of 2" in prompts[1] and "+++ b/b.py" in prompts[1]
    assert result.summary == "part one\n\npart two" and result.reviewed == ["a.py", "b.py"]


def test_severity_threshold_drops_milder_findings(planted):
    nit = {"path": "stats.py", "line": 2, "severity": "nit", "title": "n", "body": "b"}
    major = {"path": "stats.py", "line": 3, "severity": "major", "title": "m", "body": "b"}
    both = [
        {"type": "doing", "id": "a", "name": "report_finding", "arguments": nit},
        *call("report_finding", major, id="b"),
    ]
    session = scripted_session(planted, both, say("ok"))
    result = review(None, session=session, workspace=planted.root, severity="major")
    assert [f.title for f in result.findings] == ["m"]


def test_demo_review_finds_the_planted_bug_at_its_line(planted, demo):
    result = review(None, workspace=planted.root)
    assert result.provider == "demo"
    (finding,) = result.findings
    assert (finding.path, finding.line, finding.severity) == ("stats.py", 3, "major")
    assert finding.code == "    return total / len(values)"
    assert "demo" in result.summary.lower()


def test_main_exit_codes_and_sarif_output(planted, demo, tmp_path, capsys):
    out = tmp_path / "review.sarif"
    args = ["-C", str(planted.root), "-q", "--format", "sarif", "--output", str(out)]
    assert main([*args, "--fail-on", "major"]) == 1
    log = json.loads(out.read_text())
    assert sorted(jsonschema.Draft4Validator(SCHEMA).iter_errors(log), key=str) == []
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 3
    }
    assert main([*args, "--fail-on", "blocker"]) == 0
    assert main(["-C", str(planted.root), "-q"]) == 0
    assert "| major | `stats.py:3` |" in capsys.readouterr().out


def test_main_on_an_empty_diff_says_nothing_to_review(planted, demo, capsys):
    assert main(["-C", str(planted.root), "-q", "HEAD", "--fail-on", "nit"]) == 0
    assert capsys.readouterr().out.strip() == "nothing to review"


@pytest.mark.parametrize(
    "args, message",
    [(["nosuchbranch"], "unknown revision"), (["HEAD~9..HEAD"], "unknown revision")],
)
def test_main_errors_exit_2(planted, demo, capsys, args, message):
    assert main(["-C", str(planted.root), "-q", *args]) == 2
    assert message in capsys.readouterr().err


def test_not_a_git_repository_as_a_real_process(tmp_path, demo):
    proc = subprocess.run(
        [sys.executable, "-m", "elelem_kernel.cli", "review", "--fail-on", "major"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "not a git repository" in proc.stderr


def test_cli_review_as_a_real_process(planted, demo):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "elelem_kernel.cli",
            "review",
            "--format",
            "json",
            "--fail-on",
            "major",
        ],
        cwd=planted.root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [(f["path"], f["line"]) for f in data["findings"]] == [("stats.py", 3)]
    assert "report_finding" in proc.stderr  # progress goes to stderr, the report to stdout


def test_file_names_with_escape_sequences_are_printed_visibly(repo, demo, capsys):
    repo.commit(**{"a.txt": "a\n"})
    repo.commit(**{"\x1b]0;pwned\x07.bin": b"\x00\x01\x02"})
    assert main(["-C", str(repo.root), "-q"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;pwned\\x07.bin" in out


def test_review_closes_the_provider_of_the_session_it_made_and_only_that(
    planted, monkeypatch, tmp_path
):
    from elelem_kernel.agent import registry

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    closed = []

    class Closing(Scripted):
        async def aclose(self):
            closed.append(self)

    config = registry.Config()
    config.provider("closing", lambda model=None, **o: Closing(say("fine")))
    monkeypatch.setattr(registry, "CONFIG", config)
    monkeypatch.setattr(registry, "_builtins_loaded", True)
    assert review(None, provider="closing", workspace=planted.root).summary == "fine"
    assert len(closed) == 1
    mine = Session(Closing(say("fine")), Toolbox(), workspace=planted.root)
    review(None, session=mine, workspace=planted.root)
    assert len(closed) == 1


def test_the_public_face_reviews_too(planted):
    import elelem_kernel

    session = scripted_session(planted, say("Looks fine."))
    result = elelem_kernel.review(None, session=session, workspace=planted.root)
    assert isinstance(result, elelem_kernel.ReviewResult) and result.summary == "Looks fine."


# `elelem-kernel review`'s report file: `--report FILE`, and the deprecated `-o`/`--output`.
def _run(planted, *args):
    return main(["-C", str(planted.root), "-q", "--format", "json", *args])


def test_report_writes_the_file_and_says_nothing_of_deprecation(planted, demo, tmp_path, capsys):
    out = tmp_path / "review.json"
    assert _run(planted, "--report", str(out)) == 0
    assert json.loads(out.read_text())["findings"][0]["path"] == "stats.py"
    captured = capsys.readouterr()
    assert captured.out == "" and "deprecated" not in captured.err


def test_the_old_dash_o_file_still_writes_the_report_with_one_deprecation_line(
    planted, demo, tmp_path, capsys
):
    out = tmp_path / "old.json"
    assert _run(planted, "-o", str(out), "--fail-on", "major") == 1
    assert json.loads(out.read_text())["findings"][0]["severity"] == "major"
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "deprecated" in line]
    assert lines == [
        "elelem-kernel review: -o FILE is deprecated, write --report FILE "
        "(-o is now --option NAME=VALUE)"
    ]
    assert captured.out == ""


def test_the_old_output_flag_still_writes_the_report_with_one_deprecation_line(
    planted, demo, tmp_path, capsys
):
    out = tmp_path / "old.json"
    assert _run(planted, "--output", str(out)) == 0
    assert json.loads(out.read_text())["target"]
    err = capsys.readouterr().err
    assert err.count("deprecated") == 1
    assert "elelem-kernel review: --output FILE is deprecated, write --report FILE" in err


def test_dash_o_with_a_value_is_a_provider_option_as_in_ask(planted, demo, capsys):
    assert _run(planted, "-o", "no_such_option=1") == 2
    captured = capsys.readouterr()
    assert "no_such_option" in captured.err and "deprecated" not in captured.err


def test_the_long_option_flag_without_a_value_is_refused_and_writes_nothing(
    planted, demo, tmp_path, capsys
):
    # Only the short `-o FILE` of old reviews may stand without `=`; `--option foo` is a
    # mistake, not a report file named foo.
    with pytest.raises(SystemExit) as stop:
        _run(planted, "--option", str(tmp_path / "report.md"))
    assert stop.value.code == 2
    assert "--option takes NAME=VALUE" in capsys.readouterr().err
    assert not (tmp_path / "report.md").exists()


def test_two_report_files_are_refused_and_nothing_is_written(planted, demo, tmp_path, capsys):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert _run(planted, "--report", str(one), "--output", str(two)) == 2
    assert "give the report file once" in capsys.readouterr().err
    assert not one.exists() and not two.exists()
