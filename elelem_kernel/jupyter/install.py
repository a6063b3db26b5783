"""`elelem-kernel install`: make the Elelem kernel known to Jupyter.

Writes a kernelspec (kernel.json and the logos) whose `argv` starts with the current
interpreter, so the kernel runs with the Python this package is installed in, whatever
Python starts Jupyter.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from elelem_kernel.names import KERNEL_DISPLAY_NAME, KERNEL_NAME

LOGOS = ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg")

DESCRIPTION = f"""\
Install the Elelem kernel (every cell is a prompt) for Jupyter.

Where it goes:
  --user        your per-user Jupyter data folder (default); works without any rights
  --sys-prefix  the current environment (sys.prefix/share/jupyter/kernels): the choice
                for a virtualenv or conda env that also runs JupyterLab
  --prefix P    P/share/jupyter/kernels, for a Jupyter installed elsewhere

The kernel runs with the interpreter running this command:
  {sys.executable}
"""


def kernel_json(display_name: str = KERNEL_DISPLAY_NAME, python: str | None = None) -> dict:
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


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="elelem-kernel install",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for the current user (default)")
    where.add_argument(
        "--sys-prefix", action="store_true", help="install into sys.prefix (this environment)"
    )
    where.add_argument("--prefix", metavar="P", help="install into P/share/jupyter/kernels")
    p.add_argument("--name", default=KERNEL_NAME, help=f"kernelspec name (default: {KERNEL_NAME})")
    p.add_argument(
        "--display-name",
        default=None,
        help=f"name shown in the launcher (default: {KERNEL_DISPLAY_NAME})",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """Run `elelem-kernel install [options]`; the exit code."""
    args = parser().parse_args(argv)
    prefix = sys.prefix if args.sys_prefix else args.prefix
    display_name = args.display_name or (
        KERNEL_DISPLAY_NAME if args.name == KERNEL_NAME else f"{KERNEL_DISPLAY_NAME} ({args.name})"
    )
    try:
        path = install(
            user=prefix is None, prefix=prefix, name=args.name, display_name=display_name
        )
    except OSError as error:
        print(f"elelem-kernel install: {error}", file=sys.stderr)
        print("Try --user, or --sys-prefix inside a virtual environment.", file=sys.stderr)
        return 1
    print(f"Installed the {display_name!r} kernel in {path}")
    print(f"It runs {sys.executable}. Start JupyterLab and pick {display_name!r} in the launcher.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
