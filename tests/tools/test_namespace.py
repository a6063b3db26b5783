"""python and variables in a real namespace dict."""

from __future__ import annotations

import asyncio

import pytest

from elelem_kernel.tools.namespace import list_variables, run_python, run_python_async, summarize


class FakeArray:
    """Shaped like a numpy array: what the summary reads without importing numpy."""

    shape = (3, 4)
    dtype = "float64"


class Dtypes(dict):
    """Shaped like a pandas dtypes Series (name -> dtype with .items())."""


class FakeFrame:
    shape = (100, 2)
    dtypes = Dtypes(price="float64", name="object")


class Explained:
    def _repr_llm_(self) -> str:
        return "a model of the sales data, fitted on 2024"

    def __repr__(self) -> str:
        return "<Explained object at 0x1234>"


def test_runs_in_the_namespace_and_returns_the_last_value() -> None:
    ns: dict = {}
    got = run_python(ns, "x = 20\nprint('hi')\nimport sys; print('warn', file=sys.stderr)\nx + 1")
    assert got == {"stdout": "hi\n", "stderr": "warn\n", "value": "21"}
    assert ns["x"] == 20
    assert run_python(ns, "x * 2")["value"] == "40"
    assert "value" not in run_python(ns, "None")
    assert "value" not in run_python(ns, "y = 1")


def test_exception_comes_back_with_a_traceback_of_the_agents_code() -> None:
    ns: dict = {}
    got = run_python(ns, "def f(a):\n    return 1 / a\nprint('before')\nf(0)")
    assert got["error"] == "ZeroDivisionError: division by zero"
    assert got["stdout"] == "before\n"
    assert "line 2, in f\n    return 1 / a" in got["traceback"]
    assert "namespace.py" not in got["traceback"]
    assert callable(ns["f"])


def test_syntax_error_and_system_exit_are_failures() -> None:
    got = run_python({}, "def f(:\n  pass")
    assert got["error"].startswith("SyntaxError") and "line 1" in got["error"]
    got = run_python({}, "raise SystemExit(2)")
    assert got["error"] == "SystemExit: 2"


def test_long_values_and_output_are_bounded() -> None:
    got = run_python({}, "print('x' * 100_000)\n'y' * 100_000")
    assert len(got["stdout"]) < 26_000 and "bytes cut" in got["stdout"]
    assert len(got["value"]) < 10_100 and "more characters" in got["value"]


def test_repr_llm_is_used_for_values() -> None:
    ns = {"Explained": Explained}
    assert run_python(ns, "Explained()")["value"] == "a model of the sales data, fitted on 2024"


def test_variables_summaries() -> None:
    ns = {
        "arr": FakeArray(),
        "df": FakeFrame(),
        "model": Explained(),
        "names": ["a", "b", "c"],
        "text": "hello",
        "n": 3,
        "f": lambda a, b=2: a,
        "_private": 1,
        "In": [],
        "sys": __import__("sys"),
    }
    got = list_variables(ns)
    by_name = {v["name"]: v for v in got["variables"]}
    assert sorted(by_name) == ["arr", "df", "f", "model", "n", "names", "text"]
    assert by_name["arr"]["summary"] == "shape (3, 4), dtype float64"
    assert by_name["df"]["summary"] == "shape (100, 2); columns price: float64, name: object"
    assert by_name["df"]["type"] == "FakeFrame"
    assert by_name["model"]["summary"] == "a model of the sales data, fitted on 2024"
    assert by_name["names"]["summary"] == "length 3: ['a', 'b', 'c']"
    assert by_name["f"]["summary"] == "<lambda>(a, b=2)"
    assert got["modules"] == ["sys (sys)"]
    assert [v["name"] for v in list_variables(ns, "n*")["variables"]] == ["n", "names"]
    assert "no names match" in list_variables(ns, "zz*")["note"]


def test_a_broken_repr_does_not_break_the_listing() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("nope")

    assert summarize(Broken()) == "<summary failed: RuntimeError: nope>"


def test_many_names_are_capped() -> None:
    ns = {f"v{i:04d}": i for i in range(500)}
    got = list_variables(ns)
    assert len(got["variables"]) == 300 and got["count"] == 500
    assert "showing 300 of 500 names" in got["truncated"]


def test_cancelling_interrupts_the_running_code() -> None:
    ns: dict = {}
    code = "import time\ni = 0\ntry:\n    while True:\n        i += 1\nfinally:\n    stopped = i"

    async def scenario() -> None:
        task = asyncio.ensure_future(run_python_async(ns, code))
        while not ns.get("i"):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert ns["stopped"] > 0


def test_the_async_form_gives_the_same_result() -> None:
    ns: dict = {}
    got = asyncio.run(run_python_async(ns, "print('hi')\n1 + 1"))
    assert got == {"stdout": "hi\n", "stderr": "", "value": "2"}


def test_only_the_running_codes_output_is_captured(capsys: pytest.CaptureFixture[str]) -> None:
    """Another thread printing meanwhile keeps its output; the tool result gets none of it."""
    import threading

    started, release = threading.Event(), threading.Event()
    ns = {"started": started, "release": release}

    def other() -> None:
        started.wait()
        print("from the renderer")
        release.set()

    thread = threading.Thread(target=other)
    thread.start()
    got = run_python(ns, "print('from the tool')\nstarted.set()\nrelease.wait()\nprint('done')")
    thread.join()
    assert got["stdout"] == "from the tool\ndone\n"
    assert "from the renderer" in capsys.readouterr().out
    assert "capture.py" not in run_python({}, "1/0")["traceback"]
