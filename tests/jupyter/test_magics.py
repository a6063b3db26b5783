from __future__ import annotations

import json
import subprocess
import sys

import pytest
from IPython.core.error import UsageError

from tests.git import git

HEAVY = (
    "httpx",
    "httpx_sse",
    "ipywidgets",
    "mistune",
    "jsonschema",
    "elelem_kernel.agent.session",
    "mcp",
)

LOAD = f"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "elelem_kernel")
assert "elelem" in ip.magics_manager.magics["cell"], "cell magic missing"
assert "elelem" in ip.magics_manager.magics["line"], "line magic missing"
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def test_load_ext_imports_nothing_heavy(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", LOAD],
        capture_output=True,
        text=True,
        env={"IPYTHONDIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.fixture
def ip(tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    from elelem_kernel.jupyter import shell_front

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ELELEM_PROVIDER", "echo")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "elelem_kernel")
    shell_front._FRONTS.pop(shell, None)  # a fresh session for each test
    return shell


def test_terminal_ipython_gets_the_static_output_at_the_end(ip, capsys):
    ip.run_cell_magic("elelem", "", "hello from a terminal")
    out = capsys.readouterr().out
    assert "hello from a terminal" in out and "done · echo" in out


def test_configuration_errors_are_usage_errors(ip, monkeypatch):
    monkeypatch.setenv("ELELEM_PROVIDER", "no-such-provider")
    with pytest.raises(UsageError, match="no-such-provider"):
        ip.run_line_magic("elelem", "")
    with pytest.raises(UsageError, match="no-such-provider"):
        ip.run_line_magic("elelem", "/help")


def test_options_apply_to_one_turn(ip, capsys):
    ip.run_cell_magic("elelem", "-p echo --model m2 --mode plan", "first")
    assert "m2: first" in capsys.readouterr().out
    ip.run_line_magic("elelem", "")
    status = capsys.readouterr().out
    assert "| mode | build |" in status and "| model | default |" in status


def test_new_starts_a_fresh_conversation(ip, capsys):
    from elelem_kernel.jupyter.shell_front import front_for

    ip.run_cell_magic("elelem", "", "one")
    ip.run_cell_magic("elelem", "", "two")
    session = front_for(ip).session
    assert [t["prompt"] for t in session.conversation.turns] == ["one", "two"]
    ip.run_cell_magic("elelem", "--new", "three")
    assert [t["prompt"] for t in session.conversation.turns] == ["three"]
    assert len(session.conversations.by_id) == 2


def test_line_magic_prompt_and_review_usage(ip, capsys):
    ip.run_line_magic("elelem", "what's up?")  # a quote is fine: the line is not parsed
    assert "what's up?" in capsys.readouterr().out
    with pytest.raises(UsageError, match="severity"):
        ip.run_line_magic("elelem", "review --severity nonsense")


def test_untrusted_plugins_are_said_once_and_trust_loads_them(ip, tmp_path, monkeypatch, capsys):
    from elelem_kernel.agent import registry

    monkeypatch.setattr(registry, "CONFIG", registry.Config())
    monkeypatch.setattr(registry, "_builtins_loaded", False)
    for name, value in (("_plugins_loaded", set()), ("_skipped", {}), ("_told", set())):
        monkeypatch.setattr(registry, name, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # cwd is tmp_path: not the person's
    (tmp_path / ".agents" / "plugins").mkdir(parents=True)
    (tmp_path / ".agents" / "plugins" / "shout.py").write_text(
        "import elelem_kernel\n"
        "@elelem_kernel.configure\n"
        "def plugin(config):\n"
        "    from elelem_kernel.providers.echo import EchoProvider\n"
        "    config.provider('shout', lambda model=None, **o: EchoProvider('SHOUT'))\n"
    )
    ip.run_cell_magic("elelem", "", "one")
    ip.run_cell_magic("elelem", "", "two")
    out = capsys.readouterr().out
    assert out.count("skipped 1 project plugin") == 1 and "(shout.py)" in out
    with pytest.raises(UsageError, match='unknown provider: "shout"'):
        ip.run_cell_magic("elelem", "-p shout", "three")

    ip.run_line_magic("elelem", "/trust")
    out = capsys.readouterr().out
    assert f"Trusted {tmp_path.resolve()}" in out and "New providers: `shout`." in out
    ip.run_cell_magic("elelem", "-p shout", "four")
    assert "SHOUT: four" in capsys.readouterr().out


def test_option_flag_reaches_the_provider_for_one_turn(ip, capsys, tmp_path, monkeypatch):
    pytest.importorskip("llm_echo")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    ip.run_cell_magic("elelem", "-p llm --model echo -o example_bool=true", "first")
    assert '"example_bool": true' in capsys.readouterr().out
    ip.run_cell_magic("elelem", "-p llm --model echo", "second")
    assert "example_bool" not in capsys.readouterr().out  # the option was for one turn
    with pytest.raises(UsageError, match="unknown option for echo: x. Known options: none"):
        ip.run_cell_magic("elelem", "--option x=1", "third")


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "calc.py").write_text("def f(x):\n    return x\n")
    git(tmp_path, "add", "calc.py")
    git(tmp_path, "commit", "-q", "-m", "calc")
    (tmp_path / "calc.py").write_text("def f(x):\n    return x / 0\n")
    git(tmp_path, "commit", "-q", "-am", "divide")
    return tmp_path


def test_review_takes_focus_and_severity_as_documented(ip, repo, capsys):
    # the echo provider replies with the prompt it was sent
    result = ip.run_cell(
        '%%elelem review HEAD~1..HEAD --focus "division by zero" --severity minor\n'
    )
    assert result.success, result.error_in_exec or result.error_before_exec
    out = capsys.readouterr().out
    assert "Focus on: division by zero" in out and "return x / 0" in out


def test_a_review_cell_with_an_empty_body_runs(ip, repo, capsys):
    result = ip.run_cell("%%elelem review HEAD~1..HEAD")
    assert result.success, result.error_in_exec or result.error_before_exec
    out = capsys.readouterr().out
    assert "return x / 0" in out and "Focus on" not in out


def test_the_review_body_adds_to_the_focus(ip, repo, capsys):
    result = ip.run_cell("%%elelem review HEAD~1..HEAD --focus errors\nand naming\n")
    assert result.success, result.error_in_exec or result.error_before_exec
    assert "Focus on: errors\nand naming" in capsys.readouterr().out


def test_an_empty_ask_cell_waits_for_its_body_in_a_console_and_is_a_usage_error(ip):
    # a console asks whether `%%elelem` alone is complete: it must wait for the prompt
    assert ip.input_transformer_manager.check_complete("%%elelem -p echo")[0] == "incomplete"
    assert ip.input_transformer_manager.check_complete("%%elelem review")[0] == "complete"
    result = ip.run_cell("%%elelem -p echo")
    assert isinstance(result.error_in_exec, UsageError)
    assert "cell body is empty" in str(result.error_in_exec)


def test_an_unbalanced_quote_is_a_usage_error(ip):
    with pytest.raises(UsageError, match="No closing quotation"):
        ip.run_line_magic("elelem", 'review --focus "division')


def test_terminal_ipython_shows_escape_sequences_instead_of_obeying_them(ip, capsys):
    ip.run_cell_magic("elelem", "", "hello \x1b]0;title\x07 \u202e")  # echo says it back
    out = capsys.readouterr().out
    assert "\x1b]0" not in out and "\u202e" not in out
    assert "hello \\x1b]0;title\\x07 \\u202e" in out
    ip.run_line_magic("elelem", "/history")  # slash command output, shown by front.say
    out = capsys.readouterr().out
    assert "\x1b]0" not in out and "\\x1b]0;title" in out
