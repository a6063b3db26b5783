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


def _flags_of(parser: argparse.ArgumentParser) -> dict[str, tuple[tuple[str, ...], object]]:
    """dest -> (option strings, metavar) of a parser's flags."""
    return {a.dest: (tuple(a.option_strings), a.metavar) for a in parser._actions}


def test_the_magic_takes_the_turn_flags_as_the_command_line_does():
    """One declaration (assembly/turn_flags.py): the same names, destinations and metavars
    in `elelem-kernel ask`/`review` and in a `%%elelem` cell; only the help's words differ."""
    from elelem_kernel.assembly.turn_flags import CELL, FLAGS
    from elelem_kernel.jupyter.magics import ElelemMagics

    subs = next(a for a in build_parser()._actions if a.dest == "command").choices
    command_line = {**_flags_of(subs["review"]), **_flags_of(subs["ask"])}
    magic = _flags_of(ElelemMagics.elelem.parser)
    assert {dest: magic[dest] for dest in CELL} == {dest: command_line[dest] for dest in CELL}
    assert set(CELL) == set(FLAGS)
    magic_help = {a.dest: a.help for a in ElelemMagics.elelem.parser._actions}
    assert magic_help["budget"] == FLAGS["budget"].cell_help


def test_the_magic_parses_a_cell_line_with_the_shared_flags():
    from elelem_kernel.jupyter.magics import ElelemMagics

    line = ["-p", "echo", "--model", "m1", "-o", "a=1", "--option", "b=2", "--mode", "plan"]
    line += ["--allow", "bash", "--system-prompt", "be brief", "--budget", "0.50", "--new"]
    args = ElelemMagics.elelem.parser.parse_args(line)
    assert (args.provider, args.model, args.mode, args.new) == ("echo", "m1", "plan", True)
    assert (args.option, args.allow) == (["a=1", "b=2"], ["bash"])
    assert (args.system_prompt, args.budget) == ("be brief", "0.50")
    defaults = ElelemMagics.elelem.parser.parse_args([])
    assert (defaults.option, defaults.allow, defaults.budget, defaults.new) == ([], [], None, False)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if a.dest == "command").choices


@pytest.mark.parametrize("command", ["ask", "review", "trust", "install"])
def test_one_subcommand_s_parser_reads_its_words_as_the_full_one(command):
    """`main` builds only the subcommand it runs (declaring all ten is most of the
    parser's cost on `ask`'s path): that parser holds the one subcommand, with the same
    flags, defaults and help as in the full parser."""
    one, full = _subcommands(build_parser(command)), _subcommands(build_parser())
    assert list(one) == [command]
    assert one[command].format_help() == full[command].format_help()
    words = {"ask": ["ask", *SHARED, "hi"], "review": ["review", "main..HEAD", "-p", "echo"]}
    argv = words.get(command, [command])
    assert build_parser(command).parse_args(argv) == build_parser().parse_args(argv)


def test_a_run_builds_the_parser_of_its_subcommand_only(monkeypatch, capsys):
    import elelem_kernel.cli as cli

    built: list[str | None] = []

    def recording(command: str | None = None) -> argparse.ArgumentParser:
        built.append(command)
        return build_parser(command)

    monkeypatch.setattr(cli, "build_parser", recording)
    assert main(["providers"]) == 0
    assert main([]) == 2  # the top-level help lists every subcommand
    assert built == ["providers", None]
    assert "install the Elelem kernelspec" in capsys.readouterr().out
