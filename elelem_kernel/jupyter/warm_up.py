"""What a turn imports, imported on a background thread once a page has linked the kernel.

The first turn after a kernel (re)start otherwise imports them itself, in the person's
wait: the session and its tools, the HTTP client, the live view's widgets, nbformat and its
compiled schema for the open notebook (0.7 s of a first fix turn's 0.9 s to its diff box, against 0.3 s
warm, on a 2-core machine). `start` runs once per kernel process, when the extension's
`elelem.restore` comm arrives (jupyter/restore_comm.py: after a kernel start, or after
the cell that loaded elelem), so `%load_ext elelem_kernel` and the kernel's start stay as
quick as they were and a kernel with no page never pays for it (nbformat brings jsonschema,
which restoring avoids: tests/e2e/test_no_jsonschema.py; the open notebook's tools need it). Importing on another
thread is safe: a cell that needs a module being imported waits for it (Python's
per-module import locks), no longer than it would have taken to import it itself.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

#: The modules a first turn in a notebook page imports (`python -X importtime`), heaviest
#: first; each brings its own imports.
MODULES = (
    "elelem_kernel.assembly.workspace_tools",
    "nbformat",
    "ipywidgets",
    "elelem_kernel.mcp.attachment",
    "elelem_kernel.assembly.sessions",
    "elelem_kernel.providers.http",
    "httpx",
    "httpcore",  # httpx imports it at its first request
    "anyio._backends._asyncio",  # and anyio its event loop's backend, by this name
    "mistune",  # the live view's Markdown (render/markdown.py imports it when it renders)
    "elelem_kernel.providers.demo",
    # the HTTP providers' own modules (the turn's provider is made, and its module
    # imported, at the turn's start: `openai` alone was 5-25 ms of a first turn's wait)
    "elelem_kernel.providers.openai",
    "elelem_kernel.providers.anthropic",
    "elelem_kernel.providers.responses",
    "elelem_kernel.providers.ollama",
    "elelem_kernel.providers.server_window",  # a local server's window, asked at a first turn
    "elelem_kernel.jupyter.restore",
    "elelem_kernel.jupyter.restore_ahead",  # a magic's first turn restoring the page's records
    "elelem_kernel.render.widget",
    "elelem_kernel.tools.notebook_live",
    "elelem_kernel.tools.git_command",  # the list, shell and write tools' first call
    "elelem_kernel.tools.displays",
    "elelem_kernel.jupyter.notebook_comm",
    "elelem_kernel.jupyter.page_alive",
)

#: Markdown with what replies use: rendered once, so a first reply compiles nothing.
SAMPLE = """# Fix

Some **bold**, *emphasis*, `code` and [a link](https://example.org).

- one
- two

1. first
2. second

> a quote

| a | b |
|---|---|
| 1 | 2 |

```python
x = 1
```
"""

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start(then: Callable[[], object] | None = None) -> threading.Thread | None:
    """Import MODULES on a daemon thread, then call `then` there (an error in it is
    dropped), the first time only; that thread (None after, and `then` is not called)."""
    global _thread
    with _lock:
        if _thread is not None:
            return None
        _thread = threading.Thread(
            target=_warm_up, args=(then,), name="elelem-warm-up", daemon=True
        )
    _thread.start()
    return _thread


def _warm_up(then: Callable[[], object] | None) -> None:
    import_all()
    if then is not None:
        try:
            then()
        except Exception:  # what `then` readies is made later, by the turn that needs it
            pass


def import_all() -> list[str]:
    """Import each of MODULES, then make the HTTP clients' SSL contexts, compile
    nbformat's notebook schema (the first `notebook_edit` validates the notebook: 0.1 s)
    and render Markdown (`SAMPLE`) once; the names of the modules that could not be
    imported (a missing extra)."""
    missing = []
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # an optional dependency: the turn will say so if it needs it
            missing.append(name)
    try:
        from elelem_kernel.providers.http import make_tls_contexts

        make_tls_contexts()  # the turn's HTTP client then makes no SSL context
    except Exception:  # the first client makes them, as without this
        pass
    try:
        from nbformat.validator import get_validator

        get_validator()  # kept by nbformat for every later validation
    except Exception:  # the edit compiles it then, as without this
        pass
    try:
        from elelem_kernel.render.markdown import to_html

        # a reply's first code block imports pygments' lexer and compiles its regexes
        # (0.1-0.2 s): Python's, the language a notebook's replies show most; and mistune
        # compiles each block and inline rule the first time a reply uses it (lists,
        # tables, quotes, links: ~5 ms more of a first reply that has them)
        to_html(SAMPLE)
    except Exception:  # the first reply with code pays for it then, as without this
        pass
    return missing
