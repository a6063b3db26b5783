"""The README's command lines that are meant to run, run as written.

A fenced `bash` block right after a `<!-- runs as written ... -->` comment holds lines a
person types in notebooks/ of a clone after `bash scripts/lab.sh`, with no key: each runs
here in such a folder (a git repository with notebooks/ copied in, the venv's scripts on
PATH, a private HOME, no API key) and must exit 0 with something on stdout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.git import git

ROOT = Path(__file__).resolve().parents[1]
MARKED = re.compile(r"<!-- runs as written[^>]*-->\n```bash\n(.*?)```", re.S)


def readme_lines() -> list[str]:
    """Every line of the marked blocks, its trailing `# comment` dropped."""
    blocks = MARKED.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line]


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory) -> Path:
    clone = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "notebooks", clone / "notebooks")
    git(clone, "init", "-q")
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "the clone")
    return clone / "notebooks"


def test_the_readme_marks_lines_to_run():
    assert len(readme_lines()) >= 5, readme_lines()


@pytest.mark.parametrize("line", readme_lines())
def test_a_readme_line_runs_as_written(line, notebooks, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for key in ("OPENAI_BASE_URL", "ELELEM_PROVIDER", "ELELEM_WORKSPACE_CEILING", "ELELEM_BUDGET"):
        env.pop(key, None)
    scripts = Path(sys.executable).parent  # the venv's `elelem-kernel`, as lab.sh leaves it
    env.update(
        PATH=f"{scripts}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(tmp_path),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        OLLAMA_HOST="http://127.0.0.1:9",  # no Ollama here: the default is the demo
        ELELEM_DEMO_DELAY="0",
    )
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line],
        cwd=notebooks,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
    written = (notebooks / "context.xml").read_text() if "> context.xml" in line else ""
    assert (done.stdout + written).strip(), f"{line}: printed nothing"
