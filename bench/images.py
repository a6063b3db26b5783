"""8. Images: what a turn with 3 plots costs a request, with and without downscaling.

A scripted turn through the real session and Anthropic provider against the loopback
server: the python tool draws 3 matplotlib figures of 2400×1800 px (16×12 in at 150 dpi)
and leaves them open, so the tool captures them; the request after the call carries them
as image blocks. Measured on that request: its bytes on the wire, the images' bytes, the
session's token estimate (text at 4 characters a token, each image by its pixels as the
model is sent it) and, for comparison, what counting the base64 as text would say.
"Downscaled" is the default (Pillow fits each image to 1568 px on its long side and
re-encodes it when that is smaller); "as drawn" lifts those bounds.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common import Round, WireServer, result

NAME = "images"

PLOTS = 3
CODE = (
    "import matplotlib\n"
    "matplotlib.use('agg')\n"
    "import matplotlib.pyplot as plt\n"
    "import math\n"
    "for k in range({n}):\n"
    "    plt.figure(figsize=({w}, {h}), dpi=150)\n"
    "    xs = [i / 50 for i in range(2000)]\n"
    "    plt.plot(xs, [math.sin(x * (k + 1)) + 0.1 * math.cos(37 * x) for x in xs])\n"
    "    plt.title(f'series {{k}}')\n"
)


@contextmanager
def bounds(downscale: bool) -> Iterator[None]:
    """The image bounds of this run: the defaults, or none (images sent as drawn)."""
    from elelem_kernel import images

    saved = images.MAX_SIDE, images.MAX_BYTES
    if not downscale:
        images.MAX_SIDE, images.MAX_BYTES = 10**6, 10**9
    try:
        yield
    finally:
        images.MAX_SIDE, images.MAX_BYTES = saved


def measure(downscale: bool, width: float = 16, height: float = 12) -> dict:
    """One turn with `PLOTS` plots; the figures of the request that carries them."""
    from elelem_kernel.agent.context import estimate
    from elelem_kernel.assembly.sessions import new_session

    code = CODE.format(n=PLOTS, w=width, h=height)
    with WireServer() as server, tempfile.TemporaryDirectory() as folder, bounds(downscale):
        server.script(
            "anthropic", Round(calls=[("python", {"code": code})]), Round(text="Three waves.")
        )
        session = new_session(
            "anthropic",
            "claude-sonnet-4-5",
            mode="auto",
            workspace=Path(folder),
            base_url=server.base_url("anthropic"),
            api_key="k",
        )
        meters: list[dict] = []

        def seen(event: dict) -> None:
            if event.get("type") == "status" and event.get("context"):
                meters.append(event["context"])

        turn = session.run("plot three series and tell me what looks odd", seen)
        if turn.error:
            raise RuntimeError(turn.error)
        request = server.requests[1]
        blocks = request.body["messages"][-1]["content"][0]["content"]
        pictures = [b for b in blocks if b.get("type") == "image"]
        image_chars = sum(len(b["source"]["data"]) for b in pictures)
        [call] = [c for r in turn.record["rounds"] for c in r["calls"]]
        sizes = [f"{i['width']}×{i['height']}" for i in call["images"]]
        as_text = estimate([{"content": json.dumps(request.body["messages"])}])
    return {
        "request_bytes": len(request.raw),
        "image_bytes": image_chars * 3 // 4,
        "images": len(pictures),
        "sizes": sizes,
        "estimated_tokens": meters[1]["used"],  # the second round's, before usage came back
        "base64_as_text_tokens": as_text,
    }


def run(quick: bool = False, smoke: bool = False) -> dict:
    width, height = (2, 1.5) if smoke else (8, 6) if quick else (16, 12)
    fitted, drawn = measure(True, width, height), measure(False, width, height)
    rows = []
    for label, m in (("downscaled", fitted), ("as drawn", drawn)):
        rows += [
            (f"{label}: request", round(m["request_bytes"] / 1000), "KB on the wire"),
            (f"{label}: images", m["images"], ", ".join(m["sizes"])),
            (f"{label}: estimated tokens", m["estimated_tokens"], "the context meter"),
            (f"{label}: base64 as text", m["base64_as_text_tokens"], "tokens, 4 chars each"),
        ]
    rows.append(
        (
            "bytes saved by downscaling",
            round(1 - fitted["request_bytes"] / drawn["request_bytes"], 2),
            "share",
        )
    )
    return result("images", f"Images: a turn with {PLOTS} plots", rows, fitted=fitted, drawn=drawn)
