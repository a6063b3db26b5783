"""Making the Elelem kernel known to Jupyter (`elelem-kernel install`, cli/install_command.py).

Writes a kernelspec (kernel.json and the logos) whose `argv` starts with the current
interpreter, so the kernel runs with the Python this package is installed in, whatever
Python starts Jupyter.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME

LOGOS = ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg")


def kernel_json(
    display_name: str = KERNEL_DISPLAY_NAME, python: str | None = None
) -> dict[str, object]:
    """The kernelspec's kernel.json, launching `python -m elelem_kernel.jupyter`."""
    return {
        "argv": [
            python or sys.executable,
            "-m",
            "elelem_kernel.jupyter",
            "-f",
            "{connection_file}",
        ],
        "display_name": display_name,
        "language": KERNEL_NAME,
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def logo_folder() -> Path | None:
    """Where the logos are: the source tree's kernelspec, or the one the wheel installed."""
    candidates = [
        Path(__file__).resolve().parents[2] / "kernelspec" / KERNEL_NAME,
        Path(sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME,
    ]
    for folder in candidates:
        if (folder / LOGOS[0]).is_file():
            return folder
    return None


def install(
    *,
    user: bool = False,
    prefix: str | None = None,
    name: str = KERNEL_NAME,
    display_name: str = KERNEL_DISPLAY_NAME,
) -> str:
    """Install the kernelspec; the folder it went to."""
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / name
        folder.mkdir()
        (folder / "kernel.json").write_text(json.dumps(kernel_json(display_name), indent=2) + "\n")
        logos = logo_folder()
        if logos is not None:
            for logo in LOGOS:
                shutil.copy(logos / logo, folder / logo)
        return KernelSpecManager().install_kernel_spec(str(folder), name, user=user, prefix=prefix)
