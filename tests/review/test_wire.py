"""`elelem-kernel review` as a real process against loopback servers in each wire format."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest

from elelem_kernel.cli.review_command import main
from tests.review.test_report import SCHEMA
from tests.wire_servers import FORMATS, Round, WireServer

FINDING = {
    "path": "stats.py",
    "line": 3,
    "severity": "major",
    "title": "Empty input",
    "body": "len() may be 0",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_review_over_the_wire_produces_valid_sarif_and_fails_on_major(
    repo, tmp_path, monkeypatch, fmt
):
    repo.commit(**{"stats.py": "def mean(values):\n    return 0\n"})
    repo.commit(
        **{
            "stats.py": "def mean(values):\n    total = sum(values)\n    return total / len(values)\n"
        }
    )
    out = tmp_path / "review.sarif"
    with WireServer() as server:
        server.script(
            fmt,
            Round(calls=[("git", {"args": "log --oneline -1"})]),
            Round(calls=[("report_finding", FINDING)]),
            Round(text="One problem: `mean` of an empty list."),
        )
        args = ["review", "-p", fmt, "--model", "m1", "--format", "sarif", "--output", str(out)]
        args += ["--fail-on", "major"]
        env = {**server.env(fmt), "HOME": str(tmp_path)}
        if fmt == "openai":  # once as a real process, through the CLI
            proc = subprocess.run(
                [sys.executable, "-m", "elelem_kernel.cli", *args],
                cwd=repo.root,
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                timeout=120,
            )
            code = proc.returncode
        else:
            for name, value in env.items():
                monkeypatch.setenv(name, value)
            code = main([*args[1:], "-C", str(repo.root), "-q"])
        requests = list(server.requests)
    assert code == 1
    log = json.loads(out.read_text())
    assert sorted(jsonschema.Draft4Validator(SCHEMA).iter_errors(log), key=str) == []
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 3}
    assert log["runs"][0]["properties"]["summary"] == "One problem: `mean` of an empty list."
    first = json.dumps(requests[0].body)
    assert "report_finding" in first and "+    return total / len(values)" in first
    assert '"bash"' not in first and '"write"' not in first  # plan mode: read tools only
    assert "stats.py" in json.dumps(requests[1].body)  # the git tool's real output went back
