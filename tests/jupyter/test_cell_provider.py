"""A `%%elelem -p NAME` cell reuses the provider the last such cell made, with its probed
window, while the model, the options and the environment stay the same; anything else
makes a new one, as before. Real cells in an IPython shell against the loopback server."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.wire_servers import Round, WireServer


@pytest.fixture
def wire(monkeypatch) -> Iterator[WireServer]:
    for var in ("ELELEM_CONTEXT_WINDOW", "ELELEM_OPTIONS", "ELELEM_MODEL", "OPENAI_MODEL"):
        monkeypatch.delenv(var, raising=False)
    with WireServer() as server:
        for name, value in server.env("openai").items():
            monkeypatch.setenv(name, value)
        yield server


@pytest.fixture
def ip(tmp_path, monkeypatch, wire):
    from IPython.core.interactiveshell import InteractiveShell

    from elelem_kernel.jupyter import shell_front

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ELELEM_PROVIDER", "echo")  # the session's own: never the server's
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "elelem_kernel")
    shell_front._FRONTS.pop(shell, None)  # a fresh session for each test
    yield shell
    shell_front._FRONTS.pop(shell, None)


def cell(ip, wire: WireServer, line: str, reply: str = "ok") -> int:
    """Run `%%elelem line` answered `reply`; how many window questions (GETs) it asked."""
    asked = len(wire.info_requests)
    wire.script("openai", Round(text=reply))
    ip.run_cell_magic("elelem", line, "hi")
    return len(wire.info_requests) - asked


def models(wire: WireServer) -> list[object]:
    return [r.body.get("model") for r in wire.requests if r.method == "POST"]


def provider_of(ip) -> object:
    from elelem_kernel.jupyter.shell_front import front_for

    session = front_for(ip).session
    assert session is not None
    return session.facts._made["openai"][1]


def test_the_same_flags_reuse_the_provider_and_its_window(ip, wire, capsys):
    assert cell(ip, wire, "-p openai") > 0  # no window named: the server is asked
    first = provider_of(ip)
    assert cell(ip, wire, "-p openai") == 0
    assert cell(ip, wire, "-p openai --mode plan") == 0  # the mode is not the provider's
    assert provider_of(ip) is first
    assert capsys.readouterr().out.count("ok") >= 3
    assert ip.run_line_magic("elelem", "") is None
    assert "| provider | echo |" in capsys.readouterr().out  # the cells' provider was theirs


def test_the_window_is_asked_before_the_view_is_made_and_once(ip, wire, monkeypatch):
    """A first cell's question for the server's window goes out as the turn begins, so
    its answer comes while the live view is made, not after it (jupyter/shell_front.py)."""
    from elelem_kernel.jupyter import shell_front

    made = shell_front.new_view
    asked_before: list[int] = []

    def new_view(*args, **kwargs):
        deadline = time.monotonic() + 10
        while not wire.info_requests and time.monotonic() < deadline:
            time.sleep(0.01)  # the question is on the turns' loop, already sent or about to be
        asked_before.append(len(wire.info_requests))
        return made(*args, **kwargs)

    monkeypatch.setattr(shell_front, "new_view", new_view)
    asked = cell(ip, wire, "-p openai")
    assert asked_before[0] > 0
    assert asked == len({r.path for r in wire.info_requests})  # each endpoint asked once


def test_other_options_a_model_or_environment_make_a_new_provider(ip, wire, monkeypatch):
    assert cell(ip, wire, "-p openai") > 0
    first = provider_of(ip)
    assert cell(ip, wire, "-p openai -o temperature=0.5") > 0
    second = provider_of(ip)
    assert second is not first
    assert cell(ip, wire, "-p openai -o temperature=0.5") == 0
    assert cell(ip, wire, "-p openai --model other") > 0
    assert provider_of(ip) is not second
    monkeypatch.setenv("OPENAI_API_KEY", "another-key")
    assert cell(ip, wire, "-p openai --model other") > 0
    posts = [r for r in wire.requests if r.method == "POST"]
    assert posts[-1].headers.get("authorization") == "Bearer another-key"
    assert models(wire)[-2:] == ["other", "other"]


def test_p_without_model_is_the_providers_default_model_also_when_reused(ip, wire):
    ip.run_line_magic("elelem", "/provider openai")
    ip.run_line_magic("elelem", "/model session-model")
    cell(ip, wire, "")
    cell(ip, wire, "-p openai")
    cell(ip, wire, "-p openai")
    default = models(wire)[1]
    assert default != "session-model"
    assert models(wire) == ["session-model", default, default]


def test_a_provider_registered_again_is_made_anew(ip, capsys, monkeypatch):
    """A notebook's plugin cell run again with a changed provider: the next cells use it."""
    import elelem_kernel
    from elelem_kernel.agent import registry

    monkeypatch.setitem(registry.CONFIG.providers, "shout", None)  # undone after the test

    def register(word: str) -> None:
        class Shout:
            model = "shout"

            def fetch(self, messages, tools, emit):
                emit({"type": "saying", "text": word})
                emit({"type": "stop", "reason": "end_turn", "truncated": False})

        @elelem_kernel.configure
        def plugin(config):
            config.provider("shout", lambda model=None, **options: Shout())

    register("first-version")
    ip.run_cell_magic("elelem", "-p shout", "hi")
    ip.run_cell_magic("elelem", "-p shout", "hi")
    register("second-version")
    ip.run_cell_magic("elelem", "-p shout", "hi")
    out = capsys.readouterr().out
    assert out.count("first-version") == 2, out
    assert out.count("second-version") == 1, out
