"""The separate virtualenv holding jupyter-ai-magics, made once and kept in ~/.cache.

jupyter-ai-magics 2.31.x needs `langchain-openai<1` for `openai-chat:` models; ipykernel
lets it run as a kernel. None of it is a dependency of elelem-kernel.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PINS = ("jupyter-ai-magics==2.31.7", "langchain-openai<1", "ipykernel")
HOME = Path.home() / ".cache" / "elelem-bench" / "jupyter-ai-2.31.7"


def python(create: bool = True) -> Path:
    """The venv's interpreter, creating the venv first if needed (about a minute);
    FileNotFoundError when it is not made and `create` is false."""
    exe = HOME / "bin" / "python"
    done = HOME / ".installed"
    if done.exists() and done.read_text() == "\n".join(PINS) and exe.exists():
        return exe
    if not create:
        raise FileNotFoundError(f"no jupyter-ai venv at {HOME} (python -m bench makes it)")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(HOME)], check=True, capture_output=True)
    out = subprocess.run(
        [str(exe), "-m", "pip", "install", "-q", *PINS], capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"pip install {' '.join(PINS)} failed: {out.stderr[-600:]}")
    done.write_text("\n".join(PINS))
    return exe
