"""One widget the kernel keeps open once a page has linked it: the standing widget.

JupyterLab (>= 4.4) and Notebook 7 handle the messages of a comm target on a kernel
subshell of its own (JEP 91), made when the first comm of that target opens and deleted
when the last one closes. In most notebooks a turn's live view is the only widget, so
each turn's first widget had the page make the `jupyter.widget` subshell (a request, a
thread started in the kernel, its reply, all while the turn starts) and its last widget,
frozen at the turn's end, had it deleted. The standing widget keeps that subshell made
from the link (jupyter/restore_comm.py) on, for the kernel's life, as the standing
`elelem.notebook` comm does for its own target (jupyter/notebook_comm.py).

It is a `Layout`: the smallest model of `@jupyter-widgets/base`, which every widget
manager has; it is shown nowhere. A page that cannot make it closes its comm, and the
turns then go on as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ipywidgets import Layout

_standing: Layout | None = None  #: the standing widget, once opened


def stand() -> None:
    """Open the standing widget unless it was opened. The warm-up's thread calls it, once,
    after importing ipywidgets (jupyter/warm_up.py): the kernel's main thread never waits
    for that import."""
    global _standing
    if _standing is None:
        import ipywidgets  # lazy: the warm-up has imported it by now

        _standing = ipywidgets.Layout()
