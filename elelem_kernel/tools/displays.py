"""What the python tool's code displays, captured in order for the model.

In IPython (the Jupyter kernel) every display goes through the shell's display publisher:
`display()`, `update_display()`, the inline backend's `plt.show()`. While the tool's code
runs, the publisher also hands each display of the tool's own thread to its capture; the
display still reaches the cell as usual, except an image (a plot), which its tool card
shows (beside the call that made it, not under the turn's footer). A pyplot figure left open counts as
displayed: the tool shows it as the inline backend would at the end of a cell (and closes
it). Outside IPython (`ask`, `chat`, the ACP agent) `IPython.display.display` would only
print `<IPython.core.display.Image object>`: there it hands what a capturing thread
displays to its capture, formatted as IPython would (a figure as a PNG), and open figures
are rendered to PNG directly.

`to_result` turns the captured bundles into the tool result: a `displayed` list of text in
order (an image as `[image N]`, HTML as text, SVG described unless a rasteriser is
installed) and the images as `_images` for the session; an image the cell already shows
(an HTML display with an image in it) is marked `"shown": "cell"`, so its card and record
do not hold a second copy.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import html
import io
import re
import sys
import threading
from collections.abc import Collection, Iterator, Mapping
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, TypeGuard

from elelem_kernel.images import TYPES
from elelem_kernel.text import clip
from elelem_kernel.tools.declaration import Result

if TYPE_CHECKING:
    from IPython.core.display_functions import DisplayHandle
    from IPython.core.formatters import DisplayFormatter
    from IPython.core.interactiveshell import InteractiveShell
    from matplotlib.figure import Figure

#: Entries of `displayed` kept (the first ones).
MAX_DISPLAYS = 40
#: Characters of one display's text.
DISPLAY_CHARS = 2_000
#: Images taken from one call (the session keeps at most its own limit of them).
MAX_IMAGES = 8
#: Backends whose open figures the tool shows and closes (others are live windows).
FLUSHED_BACKENDS = ("inline", "agg", "pdf", "svg", "ps", "cairo", "pgf", "template")

#: A repr that says nothing: `<IPython.core.display.HTML object>`, `<Foo at 0x7f...>`.
DEFAULT_REPR = re.compile(r"^<\S+ (object( at 0x[0-9a-fA-F]+)?|at 0x[0-9a-fA-F]+)>$")

_local = threading.local()
_lock = threading.Lock()


class Displays:
    """The displays of one tool call, in order: `(mime bundle, is an update, shown)`;
    `shown`: the display also went to the cell's output (the card need not repeat it)."""

    def __init__(self, publish: bool = True) -> None:
        self.bundles: list[tuple[dict[str, object], bool, bool]] = []
        #: whether displays also go to the running cell (False: `notebook_run` keeps them
        #: for the cell it runs)
        self.publish = publish
        #: figures displayed as they were (not shown again at the end unless changed since)
        self.figures: set[int] = set()

    def add(self, data: object, update: bool = False, shown: bool = False) -> None:
        if isinstance(data, dict) and data and len(self.bundles) < MAX_DISPLAYS * 2:
            self.bundles.append((data, update, shown))


@contextlib.contextmanager
def captured_displays(publish: bool = True) -> Iterator[Displays]:
    """Capture what this thread displays during the block (and flush pyplot at its end);
    with `publish` false, what it displays is only captured, not shown in the running cell."""
    shell = _shell()
    if shell is not None:
        _route(shell.display_pub)
    else:
        _route_plain_display()
    sink = Displays(publish)
    previous = getattr(_local, "sink", None)
    _local.sink = sink
    before = _open_figures()
    try:
        yield sink
    finally:
        try:
            _flush_figures(sink, shell, before)  # after an error too: the plot may explain it
        except Exception:
            pass
        finally:
            _local.sink = previous


def _shell() -> InteractiveShell | None:
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return shell if getattr(shell, "display_pub", None) is not None else None


def _route(publisher: Any) -> None:
    """Make `publisher` also hand each display to the capture of the publishing thread."""
    with _lock:
        if getattr(publisher, "_elelem_routed", False):
            return
        original = publisher.publish

        def publish(*args: Any, **kwargs: Any) -> Any:
            sink = getattr(_local, "sink", None)
            if sink is not None:
                data = kwargs.get("data", args[0] if args else None)
                kept = not sink.publish or _has_image(data)  # an image shows in its card
                sink.add(data, bool(kwargs.get("update")), shown=not kept)
                if kept:
                    return None
            return original(*args, **kwargs)

        publisher.publish = publish
        publisher._elelem_routed = True


def _has_image(data: object) -> bool:
    return isinstance(data, dict) and any(mime in data for mime in TYPES)


def _route_plain_display() -> None:
    """Outside IPython, make `display()` (and `update_display`, a handle's `update`) hand
    what a capturing thread displays to its capture; other threads' calls print as before."""
    try:
        import IPython.display as public
        from IPython.core import display_functions
    except ImportError:
        return
    with _lock:
        original = display_functions.display
        if getattr(original, "_elelem_routed", False):
            return

        @functools.wraps(original)
        def display(*objs: Any, **kwargs: Any) -> Any:
            sink = getattr(_local, "sink", None)
            if sink is None or _shell() is not None:
                return original(*objs, **kwargs)
            return _display_plain(sink, objs, **kwargs)

        display._elelem_routed = True  # type: ignore[attr-defined]
        for module in (display_functions, public):
            if getattr(module, "display", None) is original:
                module.display = display  # type: ignore[attr-defined]


def _display_plain(
    sink: Displays,
    objs: tuple[object, ...],
    raw: bool = False,
    include: Collection[str] | None = None,
    exclude: Collection[str] | None = None,
    display_id: str | bool | None = None,
    update: bool = False,
    **_: object,
) -> DisplayHandle | None:
    """`display(*objs)` into `sink`, each object formatted as IPython's shell would."""
    for obj in objs:
        if raw:
            sink.add(obj, update)
        elif _is_figure(obj):
            sink.add({"image/png": _figure_png(obj), "text/plain": repr(obj)}, update)
            obj.stale = False  # drawn as it is: a change after this makes it stale again
            sink.figures.add(id(obj))
        else:
            sink.add(_formatter().format(obj, include=include, exclude=exclude)[0], update)
    if display_id:
        from IPython.core.display_functions import DisplayHandle

        return DisplayHandle(None if display_id is True else display_id)
    return None


@functools.cache
def _formatter() -> DisplayFormatter:
    """IPython's display formatter, without a shell (made once)."""
    from IPython.core.formatters import DisplayFormatter

    return DisplayFormatter()


def _is_figure(value: object) -> TypeGuard[Figure]:
    return type(value).__module__.startswith("matplotlib") and hasattr(value, "savefig")


def _figure_png(figure: Figure) -> str:
    """A matplotlib figure as base64 PNG, as the inline backend draws it."""
    out = io.BytesIO()
    figure.savefig(out, format="png", bbox_inches="tight")
    return base64.b64encode(out.getvalue()).decode("ascii")


def _open_figures() -> dict[int | str, Figure]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return {}
    from matplotlib._pylab_helpers import Gcf

    return {m.num: m.canvas.figure for m in Gcf.get_all_fig_managers()}


def _flush_figures(
    sink: Displays, shell: InteractiveShell | None, before: dict[int | str, Figure]
) -> None:
    """Show the figures the code made or changed and left open, then close them."""
    if "matplotlib.pyplot" not in sys.modules:
        return
    import matplotlib
    import matplotlib.pyplot as plt

    backend = str(matplotlib.get_backend()).lower()
    if not any(name in backend for name in FLUSHED_BACKENDS):
        return
    for number, figure in _open_figures().items():
        unchanged = not getattr(figure, "stale", True)
        if unchanged and before.get(number) is figure:
            continue
        if unchanged and id(figure) in sink.figures:
            plt.close(figure)  # displayed in this call, as it is now
            continue
        try:
            if shell is not None and "inline" in backend:
                from IPython.display import display

                count = len(sink.bundles)
                display(figure)  # to the cell, as the inline backend would
                if any("image/png" in data for data, _, _ in sink.bundles[count:]):
                    continue
            # no shell, or its formatter made no PNG: render it here
            sink.add({"image/png": _figure_png(figure), "text/plain": repr(figure)})
        finally:
            plt.close(figure)


def rich_value(value: object, sink: Displays) -> None:
    """Add the images of a last expression's rich repr (`_repr_png_` and the like), or its
    HTML as text when its plain repr says nothing (`<Styler object at 0x...>`)."""
    if type(value).__module__.startswith("matplotlib"):
        return  # a figure or axes: its figure was flushed as a display
    shell = _shell()
    try:
        if shell is not None:
            if shell.display_formatter is None:
                return
            data, _ = shell.display_formatter.format(value)
        else:
            data = {"text/plain": repr(value)}
            kinds = (("image/png", "_repr_png_"), ("image/jpeg", "_repr_jpeg_"))
            for mime, name in (*kinds, ("text/html", "_repr_html_")):
                method = getattr(value, name, None)
                found = method() if callable(method) and not isinstance(value, type) else None
                if isinstance(found, bytes):
                    data[mime] = base64.b64encode(found).decode("ascii")
                elif isinstance(found, str):
                    data[mime] = found
    except Exception:  # a broken repr must not fail the call: its text is already there
        return
    data = data if isinstance(data, dict) else {}
    images = {m: v for m, v in data.items() if m in TYPES or m == "image/svg+xml"}
    if images:
        sink.add(images)
    elif isinstance(data.get("text/html"), str) and DEFAULT_REPR.match(str(data.get("text/plain"))):
        sink.add({"text/html": data["text/html"]})  # its repr says nothing: its HTML as text


def to_result(sink: Displays) -> Result:
    """`displayed` (text in order) and `_images` for the tool result; {} when none."""
    shown: list[str] = []
    images: list[dict[str, str]] = []
    for data, update, in_cell in sink.bundles:
        count = len(images)
        text = _one(data, images)
        if in_cell and len(images) > count:
            images[-1]["shown"] = "cell"
        if text is not None and len(shown) < MAX_DISPLAYS:
            shown.append(("[update] " if update else "") + text)
    result: Result = {}
    if shown:
        result["displayed"] = shown
    if len(sink.bundles) > MAX_DISPLAYS:
        result["displayed_truncated"] = f"more than {MAX_DISPLAYS} displays: the first ones kept"
    if images:
        result["_images"] = images
    return result


def _one(data: Mapping[str, object], images: list[dict[str, str]]) -> str | None:
    """One display as text; its image (if any) appended to `images`."""
    for mime in TYPES:
        value = data.get(mime)
        if isinstance(value, (str, bytes)):
            if len(images) == MAX_IMAGES:
                return f"[{TYPES[mime]} image, not sent: more than {MAX_IMAGES} in one call]"
            if isinstance(value, bytes):
                value = base64.b64encode(value).decode("ascii")
            images.append({"mime_type": mime, "data": value.strip()})
            return f"[image {len(images)}]"
    svg = data.get("image/svg+xml")
    if isinstance(svg, str):
        png = rasterise(svg)
        if png is not None and len(images) < MAX_IMAGES:
            images.append({"mime_type": "image/png", "data": png})
            return f"[image {len(images)}, from SVG]"
        return f"[SVG image, {len(svg):,} characters, not sent: no SVG rasteriser installed]"
    plain = data.get("text/plain")
    page = data.get("text/html")
    if isinstance(page, str):
        if isinstance(plain, str) and plain.strip() and not DEFAULT_REPR.match(plain.strip()):
            return clip(plain, DISPLAY_CHARS)  # a DataFrame's plain repr reads as a table
        return clip(html_text(page), DISPLAY_CHARS)
    for mime in ("text/markdown", "text/latex"):
        text = data.get(mime)
        if isinstance(text, str):
            return clip(text, DISPLAY_CHARS)
    if isinstance(plain, str):
        return clip(plain, DISPLAY_CHARS)
    if data:
        return f"[display of {', '.join(sorted(map(str, data)))}]"
    return None


def rasterise(svg: str) -> str | None:
    """An SVG as base64 PNG when a rasteriser (cairosvg) is installed, else None."""
    try:
        import cairosvg
    except Exception:  # not installed, or its native library is missing
        return None
    try:
        png = cairosvg.svg2png(bytestring=svg.encode("utf-8"))
    except Exception:
        return None
    return base64.b64encode(png).decode("ascii")


class _Text(HTMLParser):
    """HTML to text, bounded: cells separated by ` | `, rows and blocks by newlines."""

    BREAKS = frozenset({"tr", "p", "div", "br", "li", "h1", "h2", "h3", "h4", "table"})

    def __init__(self, limit: int):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in ("td", "th"):
            self._add(" | ")
        elif tag in self.BREAKS:
            self._add("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self._add(" ".join(data.split()))

    def _add(self, text: str) -> None:
        if self.size < self.limit:
            self.parts.append(text)
            self.size += len(text)


def html_text(markup: str, limit: int = DISPLAY_CHARS) -> str:
    """Bounded text of an HTML fragment (a table as rows of `|`-separated cells)."""
    parser = _Text(limit + 200)
    parser.feed(markup[: limit * 20])
    parser.close()
    text = html.unescape("".join(parser.parts))
    lines = [re.sub(r"^\s*\|\s*", "", line).strip() for line in text.splitlines()]
    return clip("\n".join(line for line in lines if line), limit)
