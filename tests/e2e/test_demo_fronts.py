"""The demo model, the person's first model, in real kernels: it names a real model in
the words of the front the person types in, and its code leaves their variables alone."""

from __future__ import annotations

import pytest
from jupyter_client.manager import start_new_kernel

from elelem_kernel.cli import install_command
from tests.e2e.kernels import isolated_env, run, texts

pytestmark = pytest.mark.kernel


@pytest.fixture
def start(tmp_path, monkeypatch):
    prefix = tmp_path / "prefix"
    assert install_command.main(["--prefix", str(prefix)]) == 0
    folder = tmp_path / "work"
    folder.mkdir()
    env = isolated_env(
        folder,
        JUPYTER_PATH=str(prefix / "share" / "jupyter"),
        ELELEM_PROVIDER="demo",
        ELELEM_DEMO_DELAY="0",
    )
    monkeypatch.setenv("JUPYTER_PATH", env["JUPYTER_PATH"])
    started = []

    def kernel(name: str):
        km, kc = start_new_kernel(kernel_name=name, env=env, cwd=str(folder))
        started.append((km, kc))
        return kc

    yield kernel
    for km, kc in started:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_elelem_kernel_gets_its_own_words_and_keeps_the_persons_variables(start):
    kc = start("elelem")
    _, hello = run(kc, "hello")
    assert "then run /provider anthropic (or openai) in a cell" in texts(hello)
    assert "%%elelem" not in texts(hello)
    run(kc, '%%py\nsquares = "mine"')
    run(kc, "/mode auto")
    _, computed = run(kc, "compute something in python")
    assert "385" in texts(computed)
    run(kc, "plot the squares")
    _, mine = run(kc, "%%py\nprint(squares)")
    assert texts(mine).strip() == "mine"


def test_a_python_notebook_gets_the_magics_words(start):
    kc = start("python3")
    run(kc, "%load_ext elelem_kernel")
    _, hello = run(kc, "%%elelem\nhello")
    assert "then use %elelem /provider anthropic or %%elelem -p openai" in texts(hello)


def test_the_kernels_help_rows_read_alike_and_one_variable_is_singular(start):
    import re

    kc = start("elelem")
    _, helped = run(kc, "/help")
    rows = re.findall(r"^\| `/[^`]+` \| (.)", texts(helped), re.M)
    assert len(rows) > 20 and all(first.islower() for first in rows if first != "M"), rows
    run(kc, "%%py\nonly = 1")
    run(kc, "/mode auto")  # the demo lists them while it runs some Python
    _, said = run(kc, "list the variables in the namespace")
    assert "holds 1 variable:" in texts(said)
