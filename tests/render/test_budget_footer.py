"""The budget in every view's footer, from real turns over a loopback server: the live
widget, the frozen HTML/Markdown/text, and the terminal; and the budget stop's line."""

from __future__ import annotations

import asyncio
import io

import pytest

from elelem_kernel.agent.session import Session
from elelem_kernel.render.footer import footer_line
from elelem_kernel.render.static import bundle
from elelem_kernel.render.terminal_view import JsonRenderer, TerminalRenderer
from tests.agent.test_budget import Official
from tests.render.test_widget import view  # noqa: F401  (the widget fixture)
from tests.wire_servers import Round, WireServer

#: $0.28 with gpt-4.1: 100k tokens in, 10k out.
USAGE = {"input": 100_000, "output": 10_000}


@pytest.fixture
def turns(tmp_path, monkeypatch):
    """The events and records of two turns under a $0.50 budget: one done, one stopped."""
    monkeypatch.delenv("ELELEM_BUDGET", raising=False)
    with WireServer() as server:
        server.script("openai", Round(text="Hello.", usage=USAGE), Round(text="x", usage=USAGE))
        provider = Official(
            model="gpt-4.1", base_url=server.base_url("openai"), api_key="k", max_tokens=1000
        )
        s = Session(provider, provider_name="openai", model="gpt-4.1", workspace=tmp_path)
        s.command("/budget 0.50")
        out = []
        for prompt in ("one", "two", "three"):
            events: list[dict] = []
            result = asyncio.run(s.turn(prompt, renderer=events.append))
            out.append((events, result.record))
        return out


def test_the_footer_shows_spent_of_budget_in_the_live_widget(view, turns):  # noqa: F811
    events, _ = turns[0]
    for event in events:
        view(event)
    footer = view.footer.value
    assert " done · " in footer and "· $0.28 · $0.28 of $0.50</div>" in footer, footer


def test_the_frozen_outputs_show_the_budget_and_the_stop(turns):
    _, done = turns[0]
    data, metadata = bundle(done)
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert "$0.28 of $0.50" in data[mime], mime
    assert metadata["elelem"]["budget"] == done["budget"]
    _, stopped = turns[2]
    data, _ = bundle(stopped)
    assert stopped["stop"] == "budget" and stopped["rounds"] == []
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert "budget: this session spent $0.56 of $0.50, $0.00 left" in data[mime], mime
        assert "$0.56 of $0.50" in data[mime], mime
    assert "raise it: --budget 1 (command line, %%elelem) or /budget 1" in data["text/plain"]


def test_the_terminal_shows_the_budget_and_the_stop_line_without_error(turns):
    for (events, _), expected in zip(turns[:2], ("$0.28 of $0.50", "$0.56 of $0.50"), strict=True):
        err = io.StringIO()
        show = TerminalRenderer(io.StringIO(), err, color=False)
        for event in events:
            show(event)
        assert err.getvalue().rstrip().endswith(expected)
    err = io.StringIO()
    show = TerminalRenderer(io.StringIO(), err, color=False)
    for event in turns[2][0]:
        show(event)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("budget: this session spent $0.56 of $0.50")
    assert "Error" not in err.getvalue()
    assert lines[1].endswith("budget · $0.56 of $0.50")  # the footer, though no request went


def test_json_lines_carry_the_stop_and_the_budget(turns):
    out = io.StringIO()
    show = JsonRenderer(out)
    for event in turns[2][0]:
        show(event)
    assert out.getvalue().count("\n") == 1  # no blocks: nothing was sent
    assert '"stop": "budget"' in out.getvalue() and '"per": "session"' in out.getvalue()


@pytest.mark.parametrize(
    "budget, shown",
    [
        ([{"amount": 2, "unit": "usd", "per": "session", "spent": 0.42}], "$0.42 of $2.00"),
        ([{"amount": 0.5, "unit": "usd", "per": "turn", "spent": 0.0012}], "$0.0012 of $0.50/turn"),
        (
            [{"amount": 200_000, "unit": "tokens", "per": "session", "spent": 41_234}],
            "41k of 200k tokens",
        ),
    ],
)
def test_footer_forms(budget, shown):
    line = footer_line({"usage": {"input": 1}, "stop": "end_turn", "budget": budget})
    assert line.endswith(f"done · {shown}")


@pytest.mark.parametrize("garbage", [None, "x", [{"amount": "lots"}], [1, 2], {"amount": 2}])
def test_a_garbage_budget_in_a_record_shows_nothing(garbage):
    line = footer_line({"usage": {"input": 1}, "stop": "end_turn", "budget": garbage})
    assert line.endswith("done")


def test_a_call_left_unrun_by_the_budget_says_so_in_the_live_card(view):  # noqa: F811
    view({"type": "block_start", "index": 0, "block": "tool_use", "id": "c1", "name": "count"})
    view({"type": "block_stop", "index": 0})
    view({"type": "tool_state", "index": 0, "id": "c1", "state": "over budget"})
    result = {"type": "block_start", "index": 1, "block": "tool_result", "id": "c1"}
    view({**result, "ok": False, "content": '{"ok": false, "error": "not run: over the budget"}'})
    card = view.blocks[0]
    assert card.state == "over budget" and "not run: over the budget" in card.header.value
