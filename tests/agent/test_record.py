"""The turn record: written by the recorder, the same version read back by memory."""

from __future__ import annotations

from elelem_kernel.agent import memory, record


def test_a_turn_that_never_produced_a_record_gets_a_valid_one():
    for interrupted, stop in ((True, "interrupted"), (False, "error")):
        made = record.unfinished(
            conversation="c1",
            prompt="hi",
            provider="demo",
            model=None,
            cell="x",
            interrupted=interrupted,
        )
        assert memory.check(made) is None
        assert (made["v"], made["stop"], made["rounds"], made["reply"]) == (
            record.VERSION,
            stop,
            [],
            "",
        )
        assert (made["conversation"], made["cell"], made["prompt"]) == ("c1", "x", "hi")
    assert made["error"] == "the turn did not finish"


def test_the_reader_accepts_exactly_the_version_the_recorder_writes():
    written = record.TurnRecorder(conversation="c", prompt="p", provider="demo", model=None)
    written.start_round()
    done = written.finish("end_turn")
    assert memory.check(done) is None
    assert memory.check({**done, "v": record.VERSION + 1}).startswith("written by a newer")
