"""python and variables: the agent working in the session's live Python namespace.

In Jupyter the namespace is the kernel's `user_ns`, so whatever the agent defines the
person can use in the next cell, and the other way round. Summaries never import numpy
or pandas: they read `shape`, `dtype` and `dtypes` from whatever object has them.
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
import fnmatch
import itertools
import linecache
import threading
import traceback
import types

from elelem_kernel.sync import call_soon
from elelem_kernel.text import clip, showing
from elelem_kernel.tools.bounds import MAX_BYTES
from elelem_kernel.tools.capture import captured
from elelem_kernel.tools.declaration import STRING, Arguments, Result, Tool, ToolContext

#: Longest repr of a last expression's value.
VALUE_CHARS = 10_000
#: How many names `variables` lists at most.
MAX_NAMES = 300
#: Names IPython puts in `user_ns` that are not the person's variables.
HIDDEN = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})

_counter = itertools.count(1)


def run_python(namespace: dict[str, object], code: str, publish: bool = True) -> Result:
    """Execute `code` in `namespace`: stdout, stderr, the last expression's value, or a
    traceback; and what it displayed (`displayed`, its images as `_images`). With
    `publish` false the displays are not shown in the running cell: their bundles are
    the result's `_displays` (for a cell `notebook_run` runs)."""
    filename = f"<python tool #{next(_counter)}>"
    try:
        tree = ast.parse(code, filename, "exec")
    except SyntaxError as e:
        return {"error": f"SyntaxError: {e.msg} (line {e.lineno})", "traceback": _syntax(e)}
    last = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        last = ast.Expression(final.value)
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    # what code displays, only once the python tool runs (html.parser): not on every turn
    from elelem_kernel.tools.displays import Displays, captured_displays, rich_value, to_result

    result: Result = {}
    shown = Displays()
    try:
        with captured() as (out, err), captured_displays(publish) as shown:
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                value = eval(compile(last, filename, "eval"), namespace)
                if value is not None:
                    result["value"] = clip(represent(value), VALUE_CHARS)
                    rich_value(value, shown)
    except (Exception, SystemExit) as e:
        result["error"] = f"{type(e).__name__}: {e}"
        result["traceback"] = _traceback(e)
    if not publish:
        result["_displays"] = [data for data, update, _ in shown.bundles if not update]
    return {"stdout": out.text(), "stderr": err.text(), **result, **to_result(shown)}


async def run_python_async(namespace: dict[str, object], code: str, publish: bool = True) -> Result:
    """`run_python` on a worker thread, so the loop keeps going; cancelling interrupts it.

    Cancellation raises KeyboardInterrupt inside the running code (as the stop button does
    for a cell), then waits a little for it to unwind.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Result] = loop.create_future()
    lock = threading.Lock()
    running = [True]

    def work() -> None:
        try:
            result = run_python(namespace, code, publish)
        except KeyboardInterrupt:
            result = {"error": "KeyboardInterrupt: interrupted"}
        with lock:
            running[0] = False
        call_soon(loop, _settle, done, result)  # not at all if the loop is closed by now

    # The code runs in this turn's context: a new thread's own would be empty, and ipykernel
    # would then send what the code displays to whichever message set its parent last (a
    # comm message from the open notebook, on a subshell), not to the turn's cell.
    runner = contextvars.copy_context().run
    thread = threading.Thread(target=runner, args=(work,), name="elelem-python", daemon=True)
    thread.start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        with lock:
            if running[0] and thread.ident is not None:
                # ctypes only to stop a running python call: not on a turn's path
                import ctypes

                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt)
                )
        await asyncio.to_thread(thread.join, 5)
        raise


def _settle(done: asyncio.Future[Result], result: Result) -> None:
    if not done.done():
        done.set_result(result)


def list_variables(namespace: dict[str, object], pattern: str | None = None) -> Result:
    """The namespace's names (glob-filtered) with type and a short summary."""
    names = sorted(
        n
        for n, v in namespace.items()
        if not n.startswith("_")
        and n not in HIDDEN
        and not isinstance(v, types.ModuleType)
        and (not pattern or fnmatch.fnmatchcase(n, pattern))
    )
    shown = [
        {"name": n, "type": type(namespace[n]).__name__, "summary": summarize(namespace[n])}
        for n in names[:MAX_NAMES]
    ]
    modules = sorted(
        n
        for n, v in namespace.items()
        if isinstance(v, types.ModuleType)
        and not n.startswith("_")
        and (not pattern or fnmatch.fnmatchcase(n, pattern))
    )
    result: Result = {"variables": shown, "count": len(names)}
    if modules:
        result["modules"] = [f"{n} ({getattr(namespace[n], '__name__', n)})" for n in modules]
    if len(shown) < len(names):
        result["truncated"] = showing(
            len(shown), len(names), "names", "pass pattern= (e.g. 'df*') to narrow"
        )
    if not names and not modules:
        result["note"] = f"no names match {pattern!r}" if pattern else "the namespace is empty"
    return result


def summarize(value: object, limit: int = 300) -> str:
    """A line about `value`: `_repr_llm_()`, shape and dtypes, length, or a short repr."""
    try:
        return clip(_summary(value), limit)
    except Exception as e:  # a broken __repr__ must not break the listing
        return f"<summary failed: {type(e).__name__}: {e}>"


def represent(value: object) -> str:
    """The text the model gets for a value: its `_repr_llm_()` when it has one, else repr."""
    llm = _repr_llm(value)
    return llm if llm is not None else repr(value)


def _summary(value: object) -> str:
    llm = _repr_llm(value)
    if llm is not None:
        return llm
    shape = _attr(value, "shape")
    if isinstance(shape, tuple):
        dtypes = _attr(value, "dtypes")
        if dtypes is not None and hasattr(dtypes, "items"):
            columns = [f"{name}: {dtype}" for name, dtype in itertools.islice(dtypes.items(), 20)]
            count = len(dtypes)  # type: ignore[arg-type]
            more = f", ... {count - 20} more" if count > 20 else ""
            return f"shape {shape}; columns {', '.join(columns)}{more}"
        dtype = _attr(value, "dtype")
        return f"shape {shape}" + (f", dtype {dtype}" if dtype is not None else "")
    if isinstance(value, (str, bytes)):
        return f"length {len(value)}: {clip(repr(value), 120)}"
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return f"length {len(value)}: {clip(repr(value), 120)}"
    if isinstance(value, type):
        return f"class {value.__module__}.{value.__qualname__}"
    if callable(value):
        return _signature(value)
    return clip(repr(value), 200)


def _repr_llm(value: object) -> str | None:
    method = getattr(value, "_repr_llm_", None)
    if not callable(method) or isinstance(value, type):
        return None
    text = method()
    return text if isinstance(text, str) else None


def _attr(value: object, name: str) -> object:
    if isinstance(value, type):
        return None
    try:
        return getattr(value, name, None)
    except Exception:
        return None


def _signature(fn: object) -> str:
    import inspect

    name = getattr(fn, "__name__", type(fn).__name__)
    try:
        return f"{name}{inspect.signature(fn)}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"{name}(...)"


def _traceback(e: BaseException) -> str:
    """The traceback from the agent's code down, without this module's frame."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(e), e, tb))
    return clip(text, MAX_BYTES // 5)


def _syntax(e: SyntaxError) -> str:
    return "".join(traceback.format_exception_only(type(e), e))


def definitions(context: ToolContext) -> tuple[Tool, ...]:
    """The `python` and `variables` tools on the context's live namespace."""

    async def python_tool(args: Arguments) -> Result:
        return await run_python_async(context.namespace, args["code"])

    def variables_tool(args: Arguments) -> Result:
        return list_variables(context.namespace, args.get("pattern"))

    return (
        Tool(
            "python",
            "Run Python code in the session's live namespace (variables persist and the "
            "person sees them); returns stdout, stderr, the value of a final expression, or "
            "the traceback, and what the code displayed, in order: plots (a pyplot figure "
            "left open counts) and images reach you as images, tables as text.",
            {"code": STRING},
            python_tool,
            required=("code",),
            kind="execute",
            preview=lambda a: a["code"],
        ),
        Tool(
            "variables",
            "List the names in the live Python namespace with type and a short summary "
            "(shape and dtypes for arrays and data frames, length for containers).",
            {"pattern": {"type": "string", "description": "glob on names, e.g. 'df*'"}},
            variables_tool,
        ),
    )
