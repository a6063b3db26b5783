"""Code review with an agent: TARGET → diff → prompt → findings → report (markdown, json, SARIF).

Nothing here imports Jupyter or widgets; fronts call `review.run.prepare` or `review.run.review`.
"""
