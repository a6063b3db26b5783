"""The one parser of `elelem-kernel`: the flags every model-running command shares, and help."""

from __future__ import annotations

import argparse

import pytest

from elelem_kernel.cli import main
from elelem_kernel.cli.parser import build_parser

SHARED = ["-p", "echo", "--model", "m1", "-o", "max_tokens=5", "--option", "thinking=high"]


@pytest.mark.parametrize("command", ["ask", "chat", "review", "acp"])
def test_every_model_command_takes_the_shared_flags(command):
    args = build_parser().parse_args([command, *SHARED])
    assert (args.provider, args.model) == ("echo", "m1")
    assert args.option == ["max_tokens=5", "thinking=high"]


@pytest.mark.parametrize("command", ["ask", "chat", "acp"])
def test_the_mode_flag_is_shared_where_a_mode_applies(command):
    assert build_parser().parse_args([command, "--mode", "plan"]).mode == "plan"
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args([command, "--mode", "sideways"])
    assert stop.value.code == 2


def test_a_review_has_no_mode_it_is_always_read_only(capsys):
    """Refused by name: argparse would otherwise take `--mode auto` for `--model auto`."""
    assert main(["review", "--mode", "auto"]) == 2
    assert "always runs in plan mode" in capsys.readouterr().err


def test_the_shared_flags_are_one_definition_with_one_help():
    """The same words for -p, --model, -o and --mode in every command's help."""
    parser = build_parser()
    subs = next(a for a in parser._actions if a.dest == "command").choices
    helps = {
        name: {a.dest: a.help for a in subs[name]._actions if a.dest in SHARED_DESTS}
        for name in ("ask", "chat", "review", "acp")
    }
    assert set(helps["ask"]) == set(SHARED_DESTS)
    assert helps["chat"] == helps["ask"] == helps["acp"]
    assert helps["review"]["mode"] == argparse.SUPPRESS  # a review is always read-only
    assert {**helps["review"], "mode": helps["ask"]["mode"]} == helps["ask"]


SHARED_DESTS = ("provider", "model", "option", "mode")


@pytest.mark.parametrize(
    "command, words",
    [
        ("ask", ["examples:", "ELELEM_ALLOW", "ELELEM_MODE", "ELELEM_BUDGET", "--notebook"]),
        ("chat", ["examples:", "ELELEM_ALLOW", "ELELEM_MODE", "ELELEM_BUDGET", "/review"]),
        ("review", ["examples:", "ELELEM_BUDGET", "--report FILE", "deprecated", "--fail-on"]),
        ("acp", ["examples:", "ELELEM_MODE", "ELELEM_ALLOW", "--list"]),
        ("install", ["--sys-prefix", "--prefix", "--user"]),
        ("trust", ["examples:", "--revoke"]),
    ],
)
def test_each_subcommand_help_helps(command, words, capsys):
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and out.startswith(f"usage: elelem-kernel {command}")
    assert [w for w in words if w not in out] == []


def test_no_command_prints_the_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out
