"""The parts every wire parser shares: buffered calls, the template finish, the on/off switch."""

from __future__ import annotations

import pytest

from elelem_kernel.errors import ProviderError
from elelem_kernel.providers.http import PARTIAL, StreamParser, switch
from elelem_kernel.providers.openai import OpenAIProvider


class Lines(StreamParser):
    end_marker = "the last line"

    def feed(self, name, data):
        if data == "end":
            self.done, self.stop = True, name
        else:
            self.call(*data)


def run(stop, *calls, end=True):
    events = []
    parser = Lines(OpenAIProvider(), events.append)
    for call in calls:
        parser.feed("", call)
    if end:
        parser.feed(stop, "end")
    parser.finish()
    return events


def test_calls_that_parse_go_out_at_once_and_broken_ones_after_unless_cut_off():
    calls = [("a", "read", '{"path": "x"}'), ("", "list", "{oops"), ("c", "grep", {})]
    events = run("tool_use", *calls)
    doing = [(e["name"], e["arguments"]) for e in events if e["type"] == "doing"]
    assert doing == [("read", {"path": "x"}), ("grep", {}), ("list", {})]
    assert events[2]["id"].startswith("call_") and events[-1]["truncated"] is False
    cut = run("length", *calls)
    cut_doing = [(e["name"], e["arguments"]) for e in cut if e["type"] == "doing"]
    # cut off: the broken one carries what arrived, marked partial (the session never runs it)
    assert cut_doing == [("read", {"path": "x"}), ("grep", {}), ("list", {PARTIAL: "{oops"})]
    assert cut[-1] == {"type": "stop", "reason": "length", "truncated": True}


def test_a_stream_that_ended_early_is_a_retryable_error_naming_its_end():
    with pytest.raises(ProviderError, match="ended before the last line") as e:
        run("stop", end=False)
    assert e.value.retryable


@pytest.mark.parametrize(
    "value, meaning",
    [
        (None, None),
        (True, True),
        ("ON", True),
        ("1", True),
        ("off", False),
        ("", False),
        ("None", False),
        (0, False),
        ("High", "high"),
        (2048, "2048"),
    ],
)
def test_one_on_off_switch(value, meaning):
    assert switch(value) == meaning
