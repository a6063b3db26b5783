"""In a real kernel, the python tool plots with matplotlib: the plot is shown in the tool's
card (beside the call that made it, not under the turn's footer) and the next request
carries it to the model as a PNG."""

from __future__ import annotations

import base64
import json

import pytest
from jupyter_client.manager import start_new_kernel

from tests.e2e.kernels import frozen, isolated_env, of, run
from tests.wire_servers import Round, WireServer

pytestmark = pytest.mark.kernel

CODE = (
    "import matplotlib.pyplot as plt\n"
    "from IPython.display import HTML, display\n"
    "display(HTML('<table><tr><th>x</th></tr><tr><td>41</td></tr></table>'))\n"
    "plt.plot([1, 2, 30, 4])\n"
    "plt.title('one point is odd')"
)


def test_the_python_tools_plot_is_shown_in_its_card_and_sent_as_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    with WireServer() as server:
        server.script(
            "anthropic",
            Round(calls=[("python", {"code": CODE})]),
            Round(text="The third point is odd."),
        )
        env = isolated_env(tmp_path, **server.env("anthropic"))
        km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
        try:
            reply, _ = run(kc, "%load_ext elelem_kernel")
            assert reply["content"]["status"] == "ok"
            reply, msgs = run(
                kc, "%%elelem -p anthropic --mode auto\nplot column x and tell me what is odd"
            )
            assert reply["content"]["status"] == "ok"
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    shown = [
        m["content"]["data"]
        for m in of(msgs, "display_data")
        if "image/png" in m["content"]["data"] and "elelem" not in m["content"]["metadata"]
    ]
    assert shown == []  # no display of its own under the turn: its card shows it
    result = server.requests[1].body["messages"][-1]["content"][0]
    text, image = result["content"]
    said = json.loads(text["text"])
    assert said["displayed"] == ["x\n41", "[image 1]"]
    assert (
        said["images_attached"][0].startswith("image 1: ") and "PNG" in said["images_attached"][0]
    )
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")
    # the notebook keeps the plot once: in the card of the frozen output, named by the record
    output = frozen(msgs)
    [call] = [c for r in output["metadata"]["elelem"]["rounds"] for c in r["calls"]]
    [stored] = call["images"]
    assert stored["in"] == "text/html" and "data" not in stored
    assert json.dumps(output).count("data:image/png;base64,") == 1
    tables = [
        d
        for d in of(msgs, "display_data")
        if "<th>x</th>" in d["content"]["data"].get("text/html", "")
    ]
    assert len(tables) == 1  # a display without an image still goes to the cell
