"""Bad input from the person raises one type, `BadInput`, where it is checked; the fronts
catch that type and show its message."""

from __future__ import annotations

import pytest

from elelem_kernel.agent.commands import check_tools, split_words
from elelem_kernel.errors import BadInput, ElelemError
from elelem_kernel.findings import check_severity
from tests.agent.test_commands import session


def test_bad_input_is_an_elelem_error_and_a_value_error():
    assert issubclass(BadInput, ElelemError) and issubclass(BadInput, ValueError)


def test_an_unknown_severity_raises_bad_input_naming_the_choices():
    with pytest.raises(BadInput, match="use one of blocker, major, minor, nit"):
        check_severity("dire")
    assert check_severity(" Major ") == "major"


def test_an_unbalanced_quote_is_bad_input_saying_where():
    assert split_words('--focus "a b" HEAD') == ["--focus", "a b", "HEAD"]
    with pytest.raises(BadInput, match='No closing quotation in: --focus "a b'):
        split_words('--focus "a b')


def test_an_unknown_tool_to_allow_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="no tool 'nope'; tools: bash, read"):
        check_tools(session(tmp_path), ["nope"])


def test_a_command_shows_bad_input_with_its_usage_line(tmp_path):
    s = session(tmp_path)
    assert s.command("/forget 9") == (
        "`/forget`: there is no turn 9: this conversation has 0\n\nUsage: `/forget N`"
    )
    assert s.command('/trust "open').startswith('`/trust`: No closing quotation in: "open')


def test_a_command_that_fails_otherwise_is_not_taken_for_bad_input(tmp_path):
    s = session(tmp_path)

    def broken(session, args):
        raise ValueError("a bug, not the person's input")

    s.commands.add("broken", "fails", broken)
    with pytest.raises(ValueError, match="a bug"):
        s.command("/broken")
