"""`--budget` on the command line: a turn that would pass it is never sent; exit code 3."""

from __future__ import annotations

import json
import re

import pytest

from tests.test_cli import cli, folder  # noqa: F401  (the command runner and its folder)
from tests.wire_servers import Round, WireServer

#: 110k tokens a turn. Token budgets here: a loopback server's model may have no price.
USAGE = {"input": 100_000, "output": 10_000}


@pytest.fixture
def wire():
    with WireServer() as server:
        yield server


def ask(wire, folder, *args, env=None):  # noqa: F811
    env = {**wire.env("openai"), "ELELEM_MODEL": "gpt-4.1", **(env or {})}
    return cli("ask", "-p", "openai", "-o", "max_tokens=1000", *args, cwd=folder, input="", env=env)


def test_a_request_that_could_pass_the_budget_is_not_sent_and_exits_3(wire, folder):  # noqa: F811
    r = ask(wire, folder, "--budget", "500 tokens", "hi")
    assert r.returncode == 3, r.stderr
    assert wire.requests == []
    assert "budget: this session spent 0 tokens of 500 tokens, 500 tokens left" in r.stderr
    assert "To go on, raise it: --budget '" in r.stderr and "Error" not in r.stderr
    r = ask(wire, folder, "--json", "--budget", "500 tokens/turn", "hi")
    assert r.returncode == 3 and wire.requests == []
    (end,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert end["type"] == "turn_end" and end["stop"] == "budget"
    assert end["budget"] == [{"amount": 500, "unit": "tokens", "per": "turn", "spent": 0}]
    assert end["error"].startswith("budget: this turn spent 0 tokens")


def test_a_turn_within_the_budget_shows_it_in_the_footer(wire, folder):  # noqa: F811
    wire.script("openai", Round(text="Hello.", usage=USAGE))
    r = ask(wire, folder, "--budget", "500k tokens", "hi")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Hello."
    footer = r.stderr.strip().splitlines()[-1]  # a loopback server's model is not priced
    assert "done · openai/wire · cost unknown" in footer
    assert footer.endswith(" · 110k of 500k tokens")


def test_elelem_budget_is_the_default_and_off_lifts_it(wire, folder):  # noqa: F811
    wire.script("openai", Round(text="Hello."))
    env = {"ELELEM_BUDGET": "500 tokens"}
    assert ask(wire, folder, "hi", env=env).returncode == 3
    r = ask(wire, folder, "--budget", "off", "hi", env=env)
    assert r.returncode == 0 and len(wire.requests) == 1, r.stderr


@pytest.mark.parametrize(
    "value, message",
    [
        ("200k", "argument --budget: bad budget '200k': write 200k tokens for tokens"),
        ("-1", "argument --budget: bad budget '-1': give dollars (0.50, $2) or tokens"),
        ("0", "argument --budget: bad budget '0': it must be more than zero"),
    ],
)
def test_a_bad_budget_is_a_usage_error(wire, folder, value, message):  # noqa: F811
    r = ask(wire, folder, "--budget", value, "hi")
    assert r.returncode == 2 and message in r.stderr
    assert wire.requests == []


def test_a_bad_elelem_budget_and_an_unpriced_dollar_budget_are_errors(wire, folder):  # noqa: F811
    r = ask(wire, folder, "hi", env={"ELELEM_BUDGET": "lots"})
    assert r.returncode == 1 and "Error: ELELEM_BUDGET: bad budget 'lots'" in r.stderr
    r = ask(wire, folder, "--budget", "2", "hi", env={"ELELEM_MODEL": "mystery-model"})
    assert r.returncode == 1, r.stderr
    assert "cannot be kept for openai/mystery-model: its price is unknown" in r.stderr
    assert "--budget '200k tokens'" in r.stderr and wire.requests == []


def test_chat_says_to_raise_it_with_the_command(wire, folder):  # noqa: F811
    env = {**wire.env("openai"), "ELELEM_MODEL": "gpt-4.1"}
    r = cli(
        "chat",
        "-p",
        "openai",
        "--budget",
        "500 tokens",
        cwd=folder,
        env=env,
        input="hi\n/budget\n/budget off\n/budget\n",
    )
    assert r.returncode == 0, r.stderr
    assert re.search(r"To go on, raise it: /budget \d+(\.\d)?k tokens\n", r.stderr)
    assert "session: **500 tokens**, spent 0 tokens, 500 tokens left" in r.stdout
    assert "No budget set. This session spent $0.00 and 0 tokens" in r.stdout


def test_ask_in_a_notebook_counts_what_its_turns_already_spent(wire, folder):  # noqa: F811
    wire.script("openai", *(Round(text=f"answer {i}", usage=USAGE) for i in range(2)))
    for prompt in ("one", "two"):
        assert ask(wire, folder, "--notebook", "nb.ipynb", prompt).returncode == 0
    r = ask(wire, folder, "--notebook", "nb.ipynb", "--budget", "200k tokens", "three")
    assert r.returncode == 3 and len(wire.requests) == 2, r.stderr
    assert "restored 2 turns from nb.ipynb" in r.stderr
    assert "this session spent 220k tokens of 200k tokens" in r.stderr
    cells = json.loads((folder / "nb.ipynb").read_text())["cells"]
    record = cells[-1]["outputs"][-1]["metadata"]["elelem"]
    assert record["stop"] == "budget" and record["budget"][0]["spent"] == 220_000


def test_help_documents_the_option_and_the_exit_code(folder):  # noqa: F811
    assert "3 stopped by --budget" in cli("--help", cwd=folder).stdout
    for command in ("ask", "chat", "review"):
        text = " ".join(cli(command, "--help", cwd=folder).stdout.split())
        assert "--budget AMOUNT" in text and "a stop exits with 3" in text, command
