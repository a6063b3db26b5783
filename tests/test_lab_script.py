"""`bash scripts/lab.sh`, the README's first command, run for real in a copy of the
scripts, with a stand-in Python whose venv's pip, `elelem-kernel` and `jupyter` only say
how they were called (the real install takes minutes; `tests/test_lab_extra.py` checks
what it installs)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The venv's programs: each says its name, arguments and, for jupyter, its PATH.
TOOL = """#!/bin/sh
echo "RAN $(basename "$0") $*" >&2
[ "$(basename "$0")" = jupyter ] && echo "PATH=$PATH" >&2
exit 0
"""

#: `python -m venv .venv` makes the venv of stand-ins.
PYTHON = f"""#!/bin/sh
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  for tool in python elelem-kernel jupyter; do
    cat > "$3/bin/$tool" <<'TOOL'
{TOOL}TOOL
    chmod +x "$3/bin/$tool"
  done
fi
"""


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    (tmp_path / "notebooks").mkdir()
    python = tmp_path / "fake-python"
    python.write_text(PYTHON)
    python.chmod(0o755)
    return tmp_path


def lab(clone: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYTHON=str(clone / "fake-python"), SHELL="/bin/bash")
    done = subprocess.run(
        ["bash", "scripts/lab.sh"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.splitlines()


def test_setup_says_what_the_long_install_does_and_how_long_it_takes(clone):
    lines = lab(clone)
    install = next(i for i, line in enumerate(lines) if line.startswith("RAN python -m pip"))
    said = [line for line in lines[:install] if line.startswith("setup: installing")]
    assert said, lines
    assert "elelem-kernel[lab]" in said[0] and "minutes" in said[0]


def test_jupyterlab_runs_from_the_venv_with_it_first_on_the_terminals_path(clone):
    lines = lab(clone)
    started = next(line for line in lines if line.startswith("RAN jupyter "))
    path = next(line for line in lines if line.startswith("PATH="))
    assert path.removeprefix("PATH=").split(":")[0] == str(clone.resolve() / ".venv" / "bin")
    assert "--ServerApp.root_dir=notebooks" in started
    # a login shell would read /etc/profile, which resets PATH on Debian
    assert "--ServerApp.terminado_settings=shell_command=/bin/bash" in started
