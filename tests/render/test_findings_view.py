from __future__ import annotations

from elelem_kernel.render.findings_view import counts, findings_html, findings_markdown

EVIL = {
    "path": "app.py",
    "line": 4,
    "severity": "major",
    "title": "<script>alert(1)</script> | pipe",
    "body": "Body with <img src=x onerror=alert(1)> and `code`",
    "suggestion": "return safe(x)",
    "code": "return x",
}
CELL = {
    "path": "nb.ipynb",
    "line": 2,
    "cell_id": "c1",
    "severity": "blocker",
    "title": "Div",
    "body": "",
    "outside_diff": True,
}


def test_html_table_escapes_and_expands_each_finding():
    html = findings_html([EVIL, CELL])
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html
    assert html.count("<details>") == 2 and html.count("<tr>") == 3
    assert html.index("blocker") < html.index("major")  # worst first
    assert "nb.ipynb cell c1 line 2" in html and "(outside the diff)" in html
    assert "return safe(x)" in html and "return x" in html
    assert 'style="' in html and "<style" not in html and 'class="elelem-findings"' in html


def test_markdown_table_and_suggestion_diff():
    md = findings_markdown([EVIL])
    assert "| major | `app.py:4` | &lt;script>alert(1)&lt;/script> \\| pipe |" in md
    assert "```diff\n-return x\n+return safe(x)\n```" in md
    assert "<img" not in md


def test_no_findings():
    assert "no findings" in findings_html([]) and "no findings" in findings_markdown([])
    assert counts([EVIL, CELL, EVIL]) == "3 findings (1 blocker, 2 major)"


def test_suggestion_diff_lines_are_coloured_and_titles_show_code():
    html = findings_html([{**EVIL, "title": "Use `is None`"}])
    assert "<code>is None</code>" in html
    assert 'rgba(220,38,38,.15); white-space: pre">-return x</div>' in html
    assert 'rgba(22,163,74,.15); white-space: pre">+return safe(x)</div>' in html


def test_the_review_and_every_view_place_a_finding_the_same_way():
    from elelem_kernel.findings import Finding
    from elelem_kernel.render import findings_view as views
    from elelem_kernel.render.static import bundle

    for made in (
        Finding("a.py", "nit", "t", line=3),
        Finding("n.ipynb", "nit", "t", line=2, cell_id="c1"),
    ):
        where = made.location
        assert where in ("a.py:3", "n.ipynb cell c1 line 2")
        assert views.location(made.to_dict()) == where
        record = {"reply": "", "findings": [made.to_dict()]}
        assert f"**nit** {where}: t" in bundle(record)[0]["text/plain"]
