"""What the python tool's code displays becomes text in order and images for the model."""

from __future__ import annotations

import base64

import pytest

from elelem_kernel.agent.media import take_images
from elelem_kernel.tools.displays import Displays, html_text, to_result
from elelem_kernel.tools.namespace import run_python
from tests.pictures import png, png64

TABLE = "<table><tr><th>name</th><th>n</th></tr><tr><td>a &amp; b</td><td>2</td></tr></table>"


def test_displays_become_text_in_order_with_images_tables_and_svg_named():
    sink = Displays()
    sink.add({"text/plain": "hello"})
    sink.add({"image/png": png64(3, 2), "text/plain": "<Figure size 3x2>"})
    sink.add({"text/html": TABLE, "text/plain": "  name  n\n0  a & b  2"})
    sink.add({"text/html": TABLE + "<script>steal()</script>"})
    sink.add({"image/svg+xml": "<svg/>", "text/plain": "<SVG>"})
    sink.add({"image/jpeg": base64.b64decode(png64())}, update=True)  # bytes are encoded
    sink.add({"application/vnd.custom+json": {}})
    result = to_result(sink)
    assert result["displayed"] == [
        "hello",
        "[image 1]",
        "  name  n\n0  a & b  2",
        "name | n\na & b | 2",
        "[SVG image, 6 characters, not sent: no SVG rasteriser installed]",
        "[update] [image 2]",
        "[display of application/vnd.custom+json]",
    ]
    assert [i["mime_type"] for i in result["_images"]] == ["image/png", "image/jpeg"]
    assert result["_images"][1]["data"] == png64()


def test_html_text_is_bounded_and_a_useless_repr_is_not_the_text():
    sink = Displays()
    sink.add({"text/html": "<p>" + "word " * 5_000 + "</p>", "text/plain": "<HTML object>"})
    [text] = to_result(sink)["displayed"]
    assert text.startswith("word word") and text.endswith("more characters]")
    assert len(text) < 2_100
    assert html_text(TABLE) == "name | n\na & b | 2"


def test_a_figure_left_open_is_captured_and_closed():
    plt = pytest.importorskip("matplotlib.pyplot")
    namespace: dict = {}
    result = run_python(namespace, "import matplotlib.pyplot as plt\nplt.plot([3, 1, 2])\n'done'")
    assert result["value"] == "'done'" and result["displayed"] == ["[image 1]"]
    [image] = take_images(result)
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG") and image["width"] > 100
    assert plt.get_fignums() == []
    again = run_python(namespace, "x = 1")  # nothing new: nothing shown again
    assert "displayed" not in again


def test_a_plot_made_before_an_error_is_still_shown():
    pytest.importorskip("matplotlib.pyplot")
    result = run_python({}, "import matplotlib.pyplot as plt\nplt.plot([1])\n1 / 0")
    assert result["error"].startswith("ZeroDivisionError") and result["displayed"] == ["[image 1]"]


def test_a_last_value_with_a_png_repr_is_an_image():
    class Picture:
        def _repr_png_(self) -> bytes:
            return png(5, 5)

        def __repr__(self) -> str:
            return "<a picture>"

    result = run_python({"Picture": Picture}, "Picture()")
    assert result["value"] == "<a picture>" and result["displayed"] == ["[image 1]"]
    assert result["_images"] == [{"mime_type": "image/png", "data": png64(5, 5)}]


def test_many_images_are_bounded_per_call():
    sink = Displays()
    for _ in range(10):
        sink.add({"image/png": png64()})
    result = to_result(sink)
    assert len(result["_images"]) == 8
    assert result["displayed"][-1] == "[PNG image, not sent: more than 8 in one call]"


def test_the_demo_model_plots_and_says_it_received_the_image_and_its_size(tmp_path):
    pytest.importorskip("matplotlib.pyplot")
    from elelem_kernel.assembly.sessions import new_session

    session = new_session("demo", mode="auto", workspace=tmp_path, delay=0)
    result = session.run("plot the squares")
    assert result.error is None
    [call] = [c for r in result.record["rounds"] for c in r["calls"] if c["name"] == "python"]
    [image] = call["images"]
    size = f"{image['width']}×{image['height']} PNG"
    assert f"I received an image from `python`: {size} (" in result.reply
    blind = new_session("demo", mode="auto", workspace=tmp_path, delay=0, vision="off")
    assert "I received" not in blind.run("plot the squares").reply


def test_a_last_value_whose_repr_says_nothing_gives_its_html_as_text():
    class Styled:
        def _repr_html_(self) -> str:
            return TABLE

    result = run_python({"Styled": Styled}, "Styled()")
    assert result["value"].startswith("<") and result["displayed"] == ["name | n\na & b | 2"]
