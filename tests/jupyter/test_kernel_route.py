from __future__ import annotations

import pytest

from elelem_kernel.jupyter.kernel import route


@pytest.mark.parametrize(
    "code, kind, translated",
    [
        ("what is 2+2?", "prompt", "%%elelem\nwhat is 2+2?"),
        ("  explain $x and {y}\nplease", "prompt", "%%elelem\n  explain $x and {y}\nplease"),
        ("/help", "command", "%elelem /help"),
        ("/mode plan\n\n  /tools", "command", "%elelem /mode plan\n%elelem /tools"),
        ("/review", "review", "%elelem review"),
        (
            "/review HEAD~2 --severity major\nsecurity",
            "review",
            "%%elelem review HEAD~2 --severity major\nsecurity",
        ),
        ("/reviewer", "command", "%elelem /reviewer"),
        ("%who", "ipython", "%who"),
        ("%%time\nx = 1", "ipython", "%%time\nx = 1"),
        ("!ls -la", "ipython", "!ls -la"),
        ("%%py\nx = 1\nprint(x)", "python", "x = 1\nprint(x)"),
        ("\n%%py\nx = 1", "python", "x = 1"),
        ("%%python\nprint(1)", "ipython", "%%python\nprint(1)"),
        ("   \n", "empty", "   \n"),
    ],
)
def test_route(code, kind, translated):
    assert route(code) == (kind, translated)
