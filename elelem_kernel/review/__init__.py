"""Code review with an agent: TARGET → diff → prompt → findings → report (markdown, json, SARIF).

Nothing here imports Jupyter or widgets; fronts call `review.run.prepare` or `review.run.review`.
The package itself is callable, so the public face's `elelem_kernel.review(target, ...)` is
`review.run.review` (a module of that name is what Python's import system puts there anyway).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elelem_kernel.review.report import ReviewResult


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **options: Any) -> ReviewResult:
        """Review a git change (see `review.run.review`); returns a ReviewResult."""
        from elelem_kernel.review.run import (
            review,  # lazy: the review loads the agent and git helpers
        )

        return review(*args, **options)


sys.modules[__name__].__class__ = _CallablePackage
