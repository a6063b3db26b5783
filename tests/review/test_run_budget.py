"""`elelem-kernel review --budget`: a review stops before a request that could pass it."""

from __future__ import annotations

import json

import pytest

from elelem_kernel.cli.review_command import main
from tests.review.test_run import demo, planted  # noqa: F401  (fixtures)


def test_a_review_over_its_budget_stops_with_exit_3(planted, demo, capsys):  # noqa: F811
    args = ["-C", str(planted.root), "--format", "json"]
    assert main([*args, "--budget", "500 tokens"]) == 3
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["stop"] == "budget" and report["findings"] == []
    assert "budget: this session spent 0 tokens of 500 tokens" in captured.err
    assert "raise it: --budget '" in captured.err
    assert main([*args, "-q", "--budget", "2"]) == 0  # the demo model is free
    assert json.loads(capsys.readouterr().out)["stop"] is None


def test_the_diff_budget_is_still_there_under_its_own_name(planted, demo, capsys):  # noqa: F811
    assert main(["-C", str(planted.root), "-q", "--diff-budget", "100000"]) == 0
    with pytest.raises(SystemExit) as stop:
        main(["-C", str(planted.root), "-q", "--budget", "lots"])
    assert stop.value.code == 2
    assert "argument --budget: bad budget 'lots'" in capsys.readouterr().err
