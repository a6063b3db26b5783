"""The python tool's displays outside a kernel (`ask`, `chat`, the ACP agent): an image
`display()`ed and a figure `plt.show()`n reach the model as images, as in a kernel, never
as `<IPython.core.display.Image object>` printed to stdout."""

from __future__ import annotations

import base64
import json
import os

import pytest

from tests.pictures import png
from tests.test_cli import cli, folder  # noqa: F401  (the command runner and its folder)
from tests.wire_servers import Round, WireServer

#: A display of an image file, a figure shown with the inline backend's `plt.show()` (the
#: backend a notebook's terminal hands down), and an HTML table.
CODE = (
    "from IPython.display import HTML, Image, display\n"
    "display(Image(filename={path!r}))\n"
    "import matplotlib.pyplot as plt\n"
    "plt.plot([1, 2, 30, 4])\n"
    "plt.show()\n"
    "display(HTML('<table><tr><th>x</th></tr><tr><td>41</td></tr></table>'))\n"
    "print('done')"
)


def code(where) -> str:
    return CODE.format(path=str(where / "dot.png"))


INLINE = {"MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def sent(server: WireServer) -> tuple[dict, list[bytes]]:
    """The python tool's result as the model got it, and the images that came with it."""
    text, *images = server.requests[1].body["messages"][-1]["content"][0]["content"]
    return json.loads(text["text"]), [base64.b64decode(i["source"]["data"]) for i in images]


def check(said: dict, images: list[bytes]) -> None:
    assert said["stdout"] == "done\n"  # no `<IPython.core.display.Image object>`, no Figure(...)
    assert said["displayed"] == ["[image 1]", "[image 2]", "x\n41"]
    assert len(images) == 2 and all(i.startswith(b"\x89PNG") for i in images)
    assert images[0] == png(7, 5)


@pytest.mark.parametrize(
    "command", [["ask", "--mode", "auto", "plot it"], ["chat", "--mode", "auto"]]
)
def test_displays_reach_the_model_from_the_command_line(folder, command):  # noqa: F811
    pytest.importorskip("matplotlib")
    (folder / "dot.png").write_bytes(png(7, 5))
    with WireServer() as server:
        server.script(
            "anthropic",
            Round(calls=[("python", {"code": code(folder)})]),
            Round(text="An odd point."),
        )
        env = {**server.env("anthropic"), **INLINE}
        r = cli(*command, "-p", "anthropic", cwd=folder, input="plot it\n", env=env)
        assert r.returncode == 0, r.stderr
        check(*sent(server))
    assert "An odd point." in r.stdout


def test_displays_reach_the_model_from_the_acp_agent(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("acp")
    from tests.acp.test_agent import Recorder, agent, run, start, text_block

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "dot.png").write_bytes(png(7, 5))
    with WireServer() as server:
        server.script(
            "anthropic", Round(calls=[("python", {"code": code(ws)})]), Round(text="An odd point.")
        )
        (tmp_path / "home" / ".agents").mkdir(parents=True)
        env = {
            "HOME": str(tmp_path / "home"),
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "ELELEM_ACP_SESSIONS": str(tmp_path / "sessions"),
            "ELELEM_PROVIDER": "anthropic",
            **server.env("anthropic"),
            **INLINE,
        }
        client = Recorder()

        async def main():
            async with agent(client, env, tmp_path, "--mode", "auto") as conn:
                _, new = await start(conn, ws)
                await conn.prompt(session_id=new.session_id, prompt=[text_block("plot it")])

        run(main())
        check(*sent(server))
